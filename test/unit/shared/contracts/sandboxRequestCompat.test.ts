import { describe, expect, it } from "vitest";
import type { SandboxRequest } from "../../../../shared/contracts/sandbox.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { sandboxResult } from "../../../../shared/testing/sandboxResult.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { runCodeTool } from "../../../../shared/tools/runCode.js";
import { SandboxRequestV1 } from "../../../fixtures/versions/sandboxRequestV1.js";

/** Writers keep to the oldest schema still live: what run_code sends, the oldest sandbox version reads. */
describe("run_code's request to the sandbox", () => {
  it("is read by the oldest live sandbox's schema, files and session included", async () => {
    const sent: SandboxRequest[] = [];
    const sandbox = {
      keepsState: true,
      grant: "sandbox:invoke" as const,
      async run(request: SandboxRequest) {
        sent.push(request);
        return sandboxResult();
      },
    };
    const files = new MemoryFileStore();
    await files.put("run_1", "data.csv", Buffer.from("a,b\n1,2\n"), { description: "input" });
    const tool = runCodeTool(sandbox, { timeoutMs: 30_000, memoryMb: 512, maxOutputChars: 20_000, libraries: ["pandas"] });
    await tool.run(tool.parameters.parse({ code: "print(1)" }), testToolContext({ runId: "run_1", files }));
    expect(sent).toHaveLength(1);
    const read = SandboxRequestV1.safeParse(JSON.parse(JSON.stringify(sent[0])));
    expect(read.error?.issues ?? []).toEqual([]);
    expect(read.data?.files.map((f) => f.name)).toEqual(["data.csv"]);
  });
});
