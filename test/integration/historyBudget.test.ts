import { DescribeExecutionCommand, GetExecutionHistoryCommand, type HistoryEvent, SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunList } from "../../shared/contracts/responses.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * The history budget (shared/contracts/historyBudget.ts): Step Functions stops an execution at 25,000
 * history events, so before a plan step, an executor's hand-back (it waits for a person) or a
 * ReAct turn would pass the budget, the run continues in a new execution — the same run, event log
 * and id for the user — or, when no execution could hold the step, fails with a clear error.
 *
 * Budgets are counted in AWS's events (a Task has five, the local stack records two), so the
 * small budgets below are reached after a few states here. The first stack runs with 105 events:
 * a two-step plan (2 tasks, then 1) continues before its second step, and a step of five tasks
 * needs more than any execution may use.
 */
const BUDGET = 105;
/** The second stack's budget (see "a person's decisions within the history budget"). */
const APPROVALS_BUDGET = 113;
const TWO_STEPS = "Compute 17*23 and (120/8)+2^5, then write a short report";
const FIVE_TASKS = "Compute 1+1, 2+2, 3+3, 4+4 and 5+5, then write a report";

let stack: RunningStack;
let client: Client;
let sfn: SFNClient;
let second: Awaited<ReturnType<typeof stackWithBudget>>;

/** A stack with the given history budget, its API client and its Step Functions endpoint. */
async function stackWithBudget(budget: number) {
  const started = await startStack({ HISTORY_EVENT_BUDGET: String(budget) }, [], { exposeEndpoints: true });
  const { sfn: endpoint, region, credentials } = started.endpoints!;
  return { stack: started, client: new Client(started.url, started.apiKey), sfn: new SFNClient({ endpoint, region, credentials }) };
}

beforeAll(async () => {
  // Both start at once; each is kept as soon as it is up, so afterAll stops it even if the other fails.
  await Promise.all([
    stackWithBudget(BUDGET).then((started) => {
      ({ stack, client, sfn } = started);
    }),
    stackWithBudget(APPROVALS_BUDGET).then((started) => {
      second = started;
    }),
  ]);
});

afterAll(async () => {
  sfn?.destroy();
  second?.sfn.destroy();
  await Promise.all([stack?.stop(), second?.stack.stop()]);
});

async function history(executionArn: string, from = sfn): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await from.send(new GetExecutionHistoryCommand({ executionArn, nextToken }));
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  return events;
}

const entered = (events: HistoryEvent[]) =>
  events.filter((e) => e.type?.endsWith("StateEntered")).map((e) => e.stateEnteredEventDetails!.name!);

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
    const listed = await client.request<RunList>("GET", "/v1/runs?limit=50");
    expect(listed.body.runs.filter((r: { runId: string }) => r.runId === runId)).toHaveLength(1);
  });

  it("fails with a clear error when not even a new execution could hold the next step", async () => {
    const { runId } = await client.submit({ input: FIVE_TASKS, mode: "plan_solve" });
    const { run, events } = await client.waitForEnd(runId, 120_000);
    expect(run.status).toBe("failed");
    expect(run.error?.message).toMatch(
      new RegExp(`5 tasks needs about \\d+ Step Functions history events.*HISTORY_EVENT_BUDGET = ${BUDGET}`),
    );
    expect(events.filter((e) => e.type === "task.started")).toEqual([]);
    expect(events.at(-1)!.type).toBe("run.failed");
  });
});

/**
 * A person's decisions weigh on the history too: each wait, and the step that asked running again,
 * adds 13 events. The second stack runs with 113: the report step of TWO_STEPS starts in the
 * run's first execution, but its executor's approval does not fit there, so the task is deferred
 * and waits for the approval in the run's next execution. A ReAct run that waits for eight
 * approvals in a row fills its first execution the same way and goes on in a second.
 */
describe("a person's decisions within the history budget", () => {
  const EIGHT_SUMS = "Compute 1+1, 2+2, 3+3, 4+4, 5+5, 6+6, 7+7 and 8+8";

  const executionOf = (runId: string, n: number) =>
    `${second.stack.endpoints!.stateMachineArn.replace(":stateMachine:", ":execution:")}:${runId}${n > 1 ? `-${n}` : ""}`;

  it("a task whose approval its execution cannot hold waits for it in the run's next execution, asked once", {
    timeout: 180_000,
  }, async () => {
    const { client: api, sfn: states } = second;
    const { runId } = await api.submit({ input: TWO_STEPS, mode: "plan_solve", approval: { tools: "write" } });
    const { pending } = await api.waitForPending(runId, 1, 60_000);
    expect(pending[0]).toMatchObject({ kind: "tool_approval", toolName: "write_artifact", taskId: "s2.t1" });
    // The question was asked in the first execution; the second waits for the answer.
    await vi.waitFor(async () => expect(entered(await history(executionOf(runId, 2), states))).toContain("Wait for tool approval"), {
      timeout: 60_000,
      interval: 200,
    });
    const first = await history(executionOf(runId, 1), states);
    expect(entered(first)).not.toContain("Wait for tool approval");
    // Its executor asked, the history could not hold the wait, and "Plan" handed the task on.
    expect(entered(first).slice(-7)).toEqual([
      "Execute task",
      "Task finished?",
      "Task goes on in the next execution",
      "Plan",
      "More tasks to run?",
      "Continue in a new execution",
      "Continued in a new execution",
    ]);

    expect((await api.decide(runId, pending[0].interruptId, { decision: "approve" })).status).toBe(202);
    const { run, events } = await api.waitForEnd(runId, 120_000);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.executionArn).toBe(executionOf(runId, 2));
    const after = await history(run.executionArn, states);
    // The second execution runs the deferred task only, then plans, summarizes and ends.
    expect(entered(after).filter((s) => s === "Execute task")).toHaveLength(2);
    expect(entered(after).slice(-3)).toEqual(["Summarize", "Finalize", "Run succeeded"]);
    for (const events of [first, after]) expect(events.length).toBeLessThanOrEqual(APPROVALS_BUDGET);

    // One question, one answer, the report written once, one gap-free log.
    expect(events.filter((e) => e.type === "interrupt.opened")).toHaveLength(1);
    expect(events.filter((e) => e.type === "tool.called" && (e.data as { tool: string }).tool === "write_artifact")).toHaveLength(1);
    expect(
      events
        .filter((e) => e.type === "task.completed")
        .map((e) => (e.data as { taskId: string }).taskId)
        .sort(),
    ).toEqual(["s1.t1", "s1.t2", "s2.t1"]);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)!.type).toBe("run.succeeded");
    expect(run.files.map((f: { name: string }) => f.name)).toContain("report.md");
  });

  it("a ReAct run that waits for people again and again goes on in a new execution, every one within the budget", {
    timeout: 180_000,
  }, async () => {
    const { client: api, sfn: states } = second;
    const { runId } = await api.submit({ input: EIGHT_SUMS, mode: "react", approval: { tools: "all" } });
    // Each question is approved as it comes, until the run ends.
    const decided: (string | undefined)[] = [];
    const seen = new Set<string>();
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      const now = await api.run(runId);
      if (["succeeded", "failed", "cancelled", "timed_out"].includes(now.status)) break;
      const asked = now.pendingInterrupts.filter((i: { interruptId: string }) => !seen.has(i.interruptId));
      expect(asked.length).toBeLessThanOrEqual(1);
      if (asked.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      seen.add(asked[0].interruptId);
      expect((await api.decide(runId, asked[0].interruptId, { decision: "approve" })).status).toBe(202);
      decided.push((asked[0].arguments as { expression?: string } | undefined)?.expression ?? asked[0].toolName);
    }
    const { run, events } = await api.waitForEnd(runId, 120_000);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(decided.slice(0, 8)).toEqual(["1+1", "2+2", "3+3", "4+4", "5+5", "6+6", "7+7", "8+8"]);
    for (const [i, sum] of ["2", "4", "6", "8", "10", "12", "14", "16"].entries())
      expect(run.result).toContain(`${i + 1}+${i + 1} = ${sum}`);

    // The first execution handed the run on between two turns; the next went on with a turn.
    expect(run.executionArn).toBe(executionOf(runId, 2));
    const [before, after] = await Promise.all([history(executionOf(runId, 1), states), history(run.executionArn, states)]);
    expect(entered(before).slice(-3)).toEqual(["Agent finished?", "Continue in a new execution", "Continued in a new execution"]);
    expect(entered(after).slice(0, 3)).toEqual(["Start run", "Choose mode", "Agent turn"]);
    expect(entered(after).slice(-2)).toEqual(["Finalize", "Run succeeded"]);
    for (const events of [before, after]) expect(events.length).toBeLessThanOrEqual(APPROVALS_BUDGET);

    // Every approval asked once, every sum computed once, one run in one gap-free log.
    expect(events.filter((e) => e.type === "interrupt.opened")).toHaveLength(decided.length);
    expect(events.filter((e) => e.type === "tool.result")).toHaveLength(decided.length);
    expect(events.filter((e) => e.type === "run.started")).toHaveLength(1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)!.type).toBe("run.succeeded");
  });
});
