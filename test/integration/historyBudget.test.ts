import { DescribeExecutionCommand, GetExecutionHistoryCommand, SFNClient, type HistoryEvent } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../support/client.js";
import { startStack, type RunningStack } from "../support/localStack.js";

/**
 * The history budget (shared/run/historyBudget.ts): Step Functions stops an execution at 25,000
 * history events, so before a plan step would pass the budget, the run continues in a new
 * execution — the same run, event log and id for the user — or, when no execution could hold the
 * step, fails with a clear error. The stack runs with a budget of 105 events, so that a two-step
 * plan (2 tasks, then 1) continues before its second step; a step of five tasks needs more than
 * any execution may use.
 */
const BUDGET = 105;
const TWO_STEPS = "Compute 17*23 and (120/8)+2^5, then write a short report";
const FIVE_TASKS = "Compute 1+1, 2+2, 3+3, 4+4 and 5+5, then write a report";

let stack: RunningStack;
let client: Client;
let sfn: SFNClient;

beforeAll(async () => {
  stack = await startStack({ HISTORY_EVENT_BUDGET: String(BUDGET) }, [], { exposeEndpoints: true });
  client = new Client(stack.url, stack.apiKey);
  const { sfn: endpoint, region, credentials } = stack.endpoints!;
  sfn = new SFNClient({ endpoint, region, credentials });
});

afterAll(async () => {
  sfn?.destroy();
  await stack?.stop();
});

async function history(executionArn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, nextToken }));
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  return events;
}

const entered = (events: HistoryEvent[]) => events.filter((e) => e.type?.endsWith("StateEntered")).map((e) => e.stateEnteredEventDetails!.name!);

describe("a run whose plan would pass its execution's history budget", () => {
  it("continues in a new execution: one run, one gap-free event log, every execution within the budget", async () => {
    const { runId } = await client.submit({ input: TWO_STEPS, mode: "plan_solve" });
    const { run, events } = await client.waitForEnd(runId, 120_000);
    expect(run.status).toBe("succeeded");

    // The run's execution is now its second; the first handed the plan's next tasks over and ended.
    const first = `${stack.endpoints!.stateMachineArn.replace(":stateMachine:", ":execution:")}:${runId}`;
    expect(run.executionArn).toBe(`${first}-2`);
    const [before, after] = await Promise.all([history(first), history(run.executionArn)]);
    expect((await sfn.send(new DescribeExecutionCommand({ executionArn: first }))).status).toBe("SUCCEEDED");
    expect(entered(before).slice(-3)).toEqual(["More tasks to run?", "Continue in a new execution", "Continued in a new execution"]);
    // The second starts with the tasks the first's last Plan chose, then plans, summarizes and ends.
    expect(entered(after).slice(0, 3)).toEqual(["Start run", "Choose mode", "Execute tasks"]);
    expect(entered(after).slice(-3)).toEqual(["Summarize", "Finalize", "Run succeeded"]);
    for (const events of [before, after]) expect(events.length).toBeLessThanOrEqual(BUDGET);
    // Each plan iteration enters Plan, its Choice and the Map, and per task "Execute task", its
    // Choice and "Task done": the states behind the AWS estimate of 11 + 11 N events.
    expect(entered(before).filter((s) => s === "Execute task")).toHaveLength(2);
    expect(entered(after).filter((s) => s === "Execute task")).toHaveLength(1);

    // The user sees one run and one log: numbers 1..n without a gap, started once, every task once, ended last.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === "run.started")).toHaveLength(1);
    const completed = events.filter((e) => e.type === "task.completed").map((e) => (e.data as { taskId: string }).taskId);
    expect(completed).toHaveLength(3);
    expect(new Set(completed).size).toBe(3);
    expect(events.at(-1)!.type).toBe("run.succeeded");
    expect(events.filter((e) => e.type === "run.succeeded")).toHaveLength(1);
    const listed = await client.request("GET", "/v1/runs?limit=50");
    expect(listed.body.runs.filter((r: { runId: string }) => r.runId === runId)).toHaveLength(1);
  });

  it("fails with a clear error when not even a new execution could hold the next step", async () => {
    const { runId } = await client.submit({ input: FIVE_TASKS, mode: "plan_solve" });
    const { run, events } = await client.waitForEnd(runId, 120_000);
    expect(run.status).toBe("failed");
    expect(run.error.message).toMatch(new RegExp(`5 tasks needs about \\d+ Step Functions history events.*HISTORY_EVENT_BUDGET = ${BUDGET}`));
    expect(events.filter((e) => e.type === "task.started")).toEqual([]);
    expect(events.at(-1)!.type).toBe("run.failed");
  });
});
