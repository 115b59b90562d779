import { BedrockAgentCoreClient } from "@aws-sdk/client-bedrock-agentcore";
import { describe, expect, it } from "vitest";
import { AgentCoreInterpreter } from "../../../../shared/sandbox/agentCoreInterpreter.js";
import { settingsFromEnv } from "../../../../shared/settings.js";

describe("run_code's runtime setting", () => {
  it("agentcore needs the code interpreter's id, and says so", () => {
    expect(() => settingsFromEnv({ TABLE_NAME: "t", SANDBOX_RUNTIME: "agentcore" })).toThrow(
      /SANDBOX_RUNTIME=agentcore needs CODE_INTERPRETER_ID/,
    );
    expect(() => settingsFromEnv({ TABLE_NAME: "t", SANDBOX_RUNTIME: "lambda" })).toThrow(/SANDBOX_RUNTIME/);
    expect(settingsFromEnv({ TABLE_NAME: "t", SANDBOX_RUNTIME: "agentcore", CODE_INTERPRETER_ID: "ci-1" }).sandbox).toMatchObject({
      runtime: "agentcore",
      codeInterpreterId: "ci-1",
      sessionSeconds: 3_600,
    });
    expect(settingsFromEnv({ TABLE_NAME: "t" }).sandbox.runtime).toBe("pyodide");
  });
});

describe("the AgentCore code interpreter's adapter", () => {
  it("refuses code over the size limit and a file name that is not plain before it calls AgentCore", async () => {
    // An endpoint nothing listens on: a call that got through would fail with a connection error instead.
    const client = new BedrockAgentCoreClient({
      endpoint: "http://127.0.0.1:9",
      region: "us-east-1",
      credentials: { accessKeyId: "a", secretAccessKey: "b" },
      maxAttempts: 1,
    });
    const sandbox = new AgentCoreInterpreter(client, "ci-1", { sessionSeconds: 600 });
    await expect(sandbox.run({ code: "x".repeat(100_001), session: "run/react" })).rejects.toThrow(/too_big|at most 100000/i);
    await expect(sandbox.run({ code: "1", files: [{ name: "../etc/passwd", base64: "" }] })).rejects.toThrow(/Invalid/);
    client.destroy();
  });
});
