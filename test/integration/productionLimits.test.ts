import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../infra/local/stack.js";
import type { PendingUploadView } from "../../shared/contracts/files.js";
import { W1, workloadScenario } from "../bench/workloads.js";
import { Client } from "../support/client.js";
import { startScriptedModel } from "../support/scriptedModel.js";
import { last, ScriptRouter } from "../support/scriptedRoles.js";

/**
 * What a production account runs out of first, counted on the local stack (in this process, so the
 * test reads what the emulated services were asked): Step Functions allows 20 GetExecutionHistory
 * calls a second per account, so a run far from its history budget must not ask for its history.
 */
/** The big file: 60 MB, read at its end. */
const BIG_BYTES = 60 * 1024 * 1024;
const KEY = `sk_test_limits_${Math.random().toString(36).slice(2)}`;

let stack: LocalStack | undefined;
let model: Awaited<ReturnType<typeof startScriptedModel>> | undefined;
let client: Client;

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = "WARN";
  const router = new ScriptRouter(workloadScenario(W1)).on("BIG", (turn) =>
    last(turn).role === "tool"
      ? { text: `The file ends with: ${last(turn).content.split("\n")[0]}` }
      : { toolCalls: [{ name: "read_artifact", arguments: { filename: "big.log", offset: BIG_BYTES - 7 } }] },
  );
  model = await startScriptedModel(router.script);
  process.env.OPENAI_BASE_URL = model.url;
  process.env.STEPWISE_MODEL = "limits-model";
  stack = await startLocalStack({ port: 0, apiKeys: { [KEY]: "limits" } });
  client = new Client(stack.url, KEY);
}, 300_000); // a first start builds the console

afterAll(async () => {
  await stack?.close();
  await model?.close();
});

describe("the Step Functions history API", () => {
  it("is called at most once for a W1 run (2 steps of 4 tasks): the budget is weighed by the estimate the run carries", async () => {
    const calls = () => stack!.stepFunctions.requests.get("GetExecutionHistory") ?? 0;
    const before = calls();
    const { runId } = await client.submit({ input: "[[W1-limits]] Compute every item of the bench plan.", mode: "plan_solve" });
    const { run, events } = await client.waitForEnd(runId, 120_000);
    expect(run.status).toBe("succeeded");
    expect(events.filter((e) => e.type === "task.completed")).toHaveLength(8);
    // The notifier's count of state transitions at the end is the one call (best effort).
    await expect.poll(() => client.run(runId).then((r) => r.usage.stateTransitions), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(calls() - before).toBeLessThanOrEqual(1);
  });
});

describe("a big file", () => {
  it("is read at its end by range: the stack's memory grows far less than the 60 MB file", { timeout: 180_000 }, async () => {
    // Uploaded straight to storage in 16 MiB parts, then attached to a run.
    const body = Buffer.alloc(BIG_BYTES, "x");
    body.write("THE END", BIG_BYTES - 7);
    const announced = await client.request<PendingUploadView>("POST", "/v1/files", {
      name: "big.log",
      bytes: BIG_BYTES,
      contentType: "text/plain",
    });
    expect(announced.status).toBe(201);
    const parts = [];
    for (const part of announced.body.parts as { partNumber: number; url: string }[]) {
      const start = (part.partNumber - 1) * announced.body.partBytes;
      const put = await fetch(part.url, { method: "PUT", body: body.subarray(start, start + announced.body.partBytes) });
      expect(put.status).toBe(200);
      parts.push({ partNumber: part.partNumber, etag: put.headers.get("etag")! });
    }
    expect((await client.request("POST", `/v1/files/${announced.body.fileId}/complete`, { parts })).status).toBe(201);

    // The stack runs in this process: its resident memory, sampled while the run reads the file.
    const before = process.memoryUsage().rss;
    let most = before;
    const sampler = setInterval(() => {
      most = Math.max(most, process.memoryUsage().rss);
    }, 5);
    try {
      const { runId } = await client.submit({ input: "[[BIG]] How does big.log end?", mode: "react", files: [announced.body.fileId] });
      const { run, events } = await client.waitForEnd(runId, 120_000);
      expect(run.status).toBe("succeeded");
      expect(run.result).toContain("The file ends with: THE END");
      const result = events.find((e) => e.type === "tool.result");
      expect(JSON.stringify(result?.data)).toContain(`bytes ${BIG_BYTES - 7}`);
    } finally {
      clearInterval(sampler);
    }
    expect(most - before).toBeLessThan(BIG_BYTES / 4);
  });
});
