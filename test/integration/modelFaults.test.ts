import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OfflineModel, startOfflineModel } from "../../infra/offlineModel/server.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { FAULTS, type ModelProxy, startModelProxy } from "../support/modelProxy.js";

/**
 * Real providers fail in the middle of things. Ten runs go through a proxy that fails one model
 * call in five, each of the ways providers fail in turn (429, 500, 503, a hang, an HTML page with
 * 200, a malformed event stream, a stream cut off half-way): every run succeeds, with the same
 * answer as the same request gets without faults (a partial reply is discarded, never half-applied).
 */
let model: OfflineModel;
let proxy: ModelProxy;
let stack: RunningStack;
let client: Client;
let faulty = false;

const REQUESTS = [
  { input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve" },
  { input: "What is 17*23 + sqrt(144)?", mode: "react" },
] as const;

beforeAll(async () => {
  model = await startOfflineModel({ latencyMs: 10 });
  // Every fifth call fails, the kinds in turn.
  proxy = await startModelProxy(model.url, (index) =>
    faulty && index % 5 === 2 ? FAULTS[Math.floor(index / 5) % FAULTS.length] : undefined,
  );
  // A hang costs one LLM_TIMEOUT_MS. The offline model here (in this process, 10 ms a call) starts
  // a reply within a few ms, so 1 s leaves wide room on a busy machine; a call slowed past it anyway
  // is retried like a fault, which the test allows.
  stack = await startStack(
    { OPENAI_BASE_URL: proxy.url, STEPWISE_MODEL: "stepwise-offline", LLM_TIMEOUT_MS: "1000", LLM_MAX_RETRIES: "3" },
    [],
  );
  client = new Client(stack.url, stack.apiKey);
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  await Promise.all([proxy?.close(), model?.close()]);
});

describe("model faults mid-stream and before it", { timeout: 600_000 }, () => {
  it("10 runs through a proxy failing 20 % of the model calls all succeed, with the fault-free answers", async () => {
    // The answers without faults: the offline model is deterministic.
    const expected = new Map<string, string | null>();
    for (const request of REQUESTS) {
      const { runId } = await client.submit(request);
      expected.set(request.input, (await client.waitFor(runId, undefined, 120_000)).result);
    }
    expect(proxy.requests.some((r) => r.fault)).toBe(false);
    faulty = true;
    const before = proxy.requests.length;

    const runs: { runId: string; input: string }[] = [];
    // Two batches make about 75 model calls (measured), so each kind of fault is met twice or more.
    for (let batch = 0; batch < 2; batch++) {
      // Five at a time, so faults fall on every role and on calls running side by side.
      const submitted = await Promise.all(
        Array.from({ length: 5 }, async (_, i) => {
          const request = REQUESTS[(batch * 5 + i) % REQUESTS.length]!;
          return { runId: (await client.submit(request)).runId, input: request.input };
        }),
      );
      for (const run of submitted) await client.waitFor(run.runId, undefined, 300_000);
      runs.push(...submitted);
    }
    const ended = await Promise.all(runs.map(async ({ runId, input }) => ({ input, run: await client.run(runId) })));
    expect(ended.map(({ run }) => `${run.status}${run.error ? ` ${JSON.stringify(run.error)}` : ""}`)).toEqual(
      ended.map(() => "succeeded"),
    );
    for (const { input, run } of ended) expect(run.result).toBe(expected.get(input));

    // Every kind of fault was met, about one call in five.
    const calls = proxy.requests.slice(before);
    const faulted = calls.filter((r) => r.fault);
    expect(new Set(faulted.map((r) => r.fault))).toEqual(new Set(FAULTS));
    expect(faulted.length / calls.length).toBeGreaterThan(0.15);
  });
});
