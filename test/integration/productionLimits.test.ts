import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../infra/local/stack.js";
import { W1, workloadScenario } from "../bench/workloads.js";
import { Client } from "../support/client.js";
import { startScriptedModel } from "../support/scriptedModel.js";
import { ScriptRouter } from "../support/scriptedRoles.js";

/**
 * What a production account runs out of first, counted on the local stack (in this process, so the
 * test reads what the emulated services were asked): Step Functions allows 20 GetExecutionHistory
 * calls a second per account, so a run far from its history budget must not ask for its history.
 */
const KEY = `sk_test_limits_${Math.random().toString(36).slice(2)}`;

let stack: LocalStack | undefined;
let model: Awaited<ReturnType<typeof startScriptedModel>> | undefined;
let client: Client;

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = "WARN";
  const router = new ScriptRouter(workloadScenario(W1));
  model = await startScriptedModel(router.script);
  process.env.OPENAI_BASE_URL = model.url;
  process.env.STEPWISE_MODEL = "limits-model";
  stack = await startLocalStack({ port: 0, apiKeys: { [KEY]: "limits" } });
  client = new Client(stack.url, KEY);
});

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
