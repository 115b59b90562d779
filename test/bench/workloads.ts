/**
 * Workloads W1 and W16 (issue 12): a plan_solve run against an OpenAI-compatible model that answers
 * every call after a fixed latency, with an instant tool (the calculator).
 *
 *   W1:  plan → 2 steps × 4 parallel tasks (model → tool → model) → replan after each step → summary
 *   W16: plan → 1 step × 16 parallel tasks → replan → summary
 *
 * The critical path is the model calls one after another: plan, 2 per step, a replan per step,
 * the summary (W1: 8 × latency; W16: 5 × latency). Everything above it is Stepwise's own time.
 * Figures only: nothing here asserts a duration.
 */
import { DescribeExecutionCommand, GetExecutionHistoryCommand, SFNClient } from "@aws-sdk/client-sfn";
import { Client } from "../support/client.js";
import { type ScriptStep, startScriptedModel } from "../support/scriptedModel.js";
import { last, ScriptRouter, type Turn } from "../support/scriptedRoles.js";
import { startBenchStack } from "./benchStack.js";

export interface Workload {
  name: string;
  steps: number;
  tasksPerStep: number;
  /** Issue 12's targets: the median ratio to the critical path, and per workload one more. */
  targets: { ratio: number; startSpreadMs?: number; dynamoRequests?: number };
}

export const W1: Workload = { name: "W1", steps: 2, tasksPerStep: 4, targets: { ratio: 1.15, dynamoRequests: 120 } };
export const W16: Workload = { name: "W16", steps: 1, tasksPerStep: 16, targets: { ratio: 1.3, startSpreadMs: 50 } };

/** Model calls one after another: plan, (model, model) per step, a replan per step, the summary. */
export const criticalCalls = (w: Workload) => 1 + w.steps * 3 + 1;

/** The workload's model: the planner creates the plan, executors call the calculator once, then answer. */
export function workloadScenario(w: Workload) {
  return (turn: Turn): ScriptStep => {
    if (turn.role === "planner") {
      const planned = turn.messages.some((m) => m.role === "user" && m.content.includes("Current plan:"));
      if (planned || last(turn).role === "tool") return { text: "Continue." };
      const steps = Array.from({ length: w.steps }, (_, s) => ({
        title: `Step ${s + 1}`,
        tasks: Array.from({ length: w.tasksPerStep }, (_, t) => `Compute item ${s + 1}.${t + 1}`),
        done_when: "every item is computed",
      }));
      return { toolCalls: [{ name: "planning", arguments: { command: "create", title: "Bench plan", steps } }] };
    }
    if (turn.role === "executor") {
      if (last(turn).role === "tool") return { text: "The result is 4." };
      return { toolCalls: [{ name: "calculator", arguments: { expression: "2+2" } }] };
    }
    return { text: "Summary: every item is 4." };
  };
}

interface RunFigures {
  totalMs: number;
  modelCalls: number;
  maxInFlight: number;
  submitToFirstCall: number;
  dispatch: number[];
  startSpread: number[];
  toolRound: number[];
  join: number[];
  handover: number;
  summaryToTerminalEvent: number;
  summaryToEnd: number;
  dynamoRequests: number;
  operations: Record<string, number>;
  getRunRequests: number;
  stateTransitions: number;
  /** GetExecutionHistory calls the stack made for the run (the account allows 20/s). */
  historyCalls: number;
  /** Writes to the run's and its session's records: each writes the tenant's listing index. */
  listingWrites: { runs: number; sessions: number };
  /** Lambda invocations of the execution (its Task states) and the time they took, from its history. */
  invocations: number;
  lambdaMs: number;
  cpuMs: number;
  mainThreadBusyMs: number;
}

export interface WorkloadReport {
  workload: Workload;
  latencyMs: number;
  criticalPathMs: number;
  startMs: number;
  runs: RunFigures[];
  maxRssMiB: number;
  rssAfterMiB: number;
}

export async function benchWorkload(w: Workload, options: { runs: number; latencyMs: number }): Promise<WorkloadReport> {
  const router = new ScriptRouter(workloadScenario(w));
  const model = await startScriptedModel(router.script, { latencyMs: options.latencyMs });
  let stack: Awaited<ReturnType<typeof startBenchStack>> | undefined;
  try {
    stack = await startBenchStack({
      OPENAI_BASE_URL: model.url,
      STEPWISE_MODEL: "bench-model",
      MAX_CONCURRENCY: String(Math.max(8, w.tasksPerStep)),
    });
    const client = new Client(stack.url, stack.apiKey);
    const sfn = new SFNClient({ region: stack.endpoints.region, endpoint: stack.endpoints.sfn, credentials: stack.endpoints.credentials });
    const dynamoPort = Number(new URL(stack.endpoints.dynamodb).port);
    const runs: RunFigures[] = [];
    for (let i = 0; i <= options.runs; i++) {
      const marker = `${w.name}-run${i}`;
      const before = await stack.probe();
      const submittedAt = Date.now();
      const { runId } = await client.submit({ input: `[[${marker}]] Compute every item of the bench plan.`, mode: "plan_solve" });
      const executionArn = `${stack.endpoints.stateMachineArn.replace(":stateMachine:", ":execution:")}:${runId}`;
      // The end is the execution's stop time, so watching it can be late. The stack is asked only once
      // the summary was served (before that the model server says it is not over), and then the
      // execution (in memory, not the table): the watching adds no load to the run it measures.
      const giveUpAt = Date.now() + 60_000; // a run that fails before its summary is seen by the polling below
      while (!router.of(marker).some((t) => t.role === "summarizer") && Date.now() < giveUpAt) await new Promise((r) => setTimeout(r, 10));
      let execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
      while (execution.status === "RUNNING") {
        await new Promise((r) => setTimeout(r, 50));
        execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
      }
      if (execution.status !== "SUCCEEDED") throw new Error(`${marker}: execution ${execution.status}`);
      const endedAt = execution.stopDate!.getTime();
      await new Promise((r) => setTimeout(r, 300)); // the notifier's work after the end belongs to the run too
      const after = await stack.probe();
      let view = await client.run(runId);
      const afterGet = await stack.probe();
      // The notifier counts the state transitions once the execution has ended (the GET does not, then).
      for (let tries = 0; view.usage?.stateTransitions === undefined && tries < 100; tries++) {
        await new Promise((r) => setTimeout(r, 50));
        view = await client.run(runId);
      }
      if (view.status !== "succeeded") throw new Error(`${marker}: run ${view.status}`);
      const { events } = await client.waitForEnd(runId);
      const { invocations, lambdaMs } = await lambdaTime(sfn, executionArn);
      const terminalAt = Date.parse(events.at(-1)!.at);
      const turns = router.of(marker);
      const timing = (t: Turn) => model.timings[t.index]!;
      const phases = splitPhases(turns);
      const summary = turns.find((t) => t.role === "summarizer")!;
      const lastPlanner = turns.filter((t) => t.role === "planner").at(-1)!;
      const dispatch: number[] = [];
      const startSpread: number[] = [];
      const join: number[] = [];
      const toolRound: number[] = [];
      for (const phase of phases) {
        const firsts = phase.tasks.map((calls) => timing(calls[0]!).receivedAt);
        dispatch.push(Math.min(...firsts) - timing(phase.before).repliedAt!);
        startSpread.push(Math.max(...firsts) - Math.min(...firsts));
        const lastReply = Math.max(...phase.tasks.map((calls) => timing(calls.at(-1)!).repliedAt!));
        join.push(timing(phase.after).receivedAt - lastReply);
        for (const calls of phase.tasks)
          for (let c = 1; c < calls.length; c++) toolRound.push(timing(calls[c]!).receivedAt - timing(calls[c - 1]!).repliedAt!);
      }
      const figures: RunFigures = {
        totalMs: endedAt - submittedAt,
        modelCalls: turns.length,
        maxInFlight: maxConcurrent(turns.filter((t) => t.role === "executor").map(timing)),
        submitToFirstCall: timing(turns[0]!).receivedAt - submittedAt,
        dispatch,
        startSpread,
        toolRound,
        join,
        handover: timing(summary).receivedAt - timing(lastPlanner).repliedAt!,
        summaryToTerminalEvent: terminalAt - timing(summary).repliedAt!,
        summaryToEnd: endedAt - timing(summary).repliedAt!,
        dynamoRequests: (after.requestsByPort[dynamoPort] ?? 0) - (before.requestsByPort[dynamoPort] ?? 0),
        operations: Object.fromEntries(
          Object.entries(after.operations)
            .map(([op, n]) => [op, n - (before.operations[op] ?? 0)])
            .filter(([, n]) => (n as number) > 0),
        ),
        getRunRequests: (afterGet.requestsByPort[dynamoPort] ?? 0) - (after.requestsByPort[dynamoPort] ?? 0),
        stateTransitions: view.usage?.stateTransitions ?? Number.NaN,
        historyCalls: (after.sfnActions.GetExecutionHistory ?? 0) - (before.sfnActions.GetExecutionHistory ?? 0),
        listingWrites: {
          runs: after.listingWrites.runs - before.listingWrites.runs,
          sessions: after.listingWrites.sessions - before.listingWrites.sessions,
        },
        invocations,
        lambdaMs,
        cpuMs: after.cpuMs - before.cpuMs,
        mainThreadBusyMs: after.mainThreadBusyMs - before.mainThreadBusyMs,
      };
      if (i > 0) runs.push(figures); // the first run warms the handlers and the model client
    }
    const final = await stack.probe();
    sfn.destroy();
    return {
      workload: w,
      latencyMs: options.latencyMs,
      criticalPathMs: criticalCalls(w) * options.latencyMs,
      startMs: stack.startMs,
      runs,
      maxRssMiB: final.maxRssMiB,
      rssAfterMiB: final.rssMiB,
    };
  } finally {
    await stack?.stop();
    await model.close();
  }
}

/** Task states of an execution (each a Lambda invocation here: no callback waits in W1 or W16) and their summed duration. */
async function lambdaTime(sfn: SFNClient, executionArn: string): Promise<{ invocations: number; lambdaMs: number }> {
  const entered: number[] = [];
  let invocations = 0;
  let lambdaMs = 0;
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken }));
    for (const event of page.events ?? []) {
      // Parallel tasks pair up in any order: the sum of (exit − entry) is the same.
      if (event.type === "TaskStateEntered") entered.push(event.timestamp!.getTime());
      if (event.type === "TaskStateExited") {
        invocations++;
        lambdaMs += event.timestamp!.getTime() - (entered.shift() ?? event.timestamp!.getTime());
      }
    }
    nextToken = page.nextToken;
  } while (nextToken);
  return { invocations, lambdaMs };
}

interface Phase {
  /** The planner call whose reply started the step. */
  before: Turn;
  /** Each task's model calls, in order. */
  tasks: Turn[][];
  /** The planner (or summarizer) call after the step. */
  after: Turn;
}

/** Executor calls between two planner calls form a step; a task is known by its own task text. */
function splitPhases(turns: Turn[]): Phase[] {
  const phases: Phase[] = [];
  let before: Turn | undefined;
  let tasks = new Map<string, Turn[]>();
  for (const turn of turns) {
    if (turn.role === "executor") {
      const key = turn.messages
        .find((m) => m.role === "user")!
        .content.split("Your task:")
        .at(-1)!;
      tasks.set(key, [...(tasks.get(key) ?? []), turn]);
      continue;
    }
    if (tasks.size && before) phases.push({ before, tasks: [...tasks.values()], after: turn });
    tasks = new Map();
    before = turn;
  }
  return phases;
}

function maxConcurrent(spans: { receivedAt: number; repliedAt?: number }[]): number {
  const edges = spans.flatMap((s) => [[s.receivedAt, 1] as const, [s.repliedAt!, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of edges) {
    now += d;
    most = Math.max(most, now);
  }
  return most;
}

const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : Number.NaN);
const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : "-");

export function printReport(r: WorkloadReport): void {
  const m = (pick: (f: RunFigures) => number) => median(r.runs.map(pick));
  const all = (pick: (f: RunFigures) => number[]) => r.runs.flatMap(pick);
  const total = m((f) => f.totalMs);
  const w = r.workload;
  console.log(
    `\n## ${w.name}: ${w.steps} step(s) × ${w.tasksPerStep} tasks, model latency ${r.latencyMs} ms, median of ${r.runs.length} runs after a warm-up`,
  );
  console.log(
    `wall time (submit → execution end)  ${fmt(total)} ms  (min ${fmt(Math.min(...r.runs.map((f) => f.totalMs)))}, max ${fmt(Math.max(...r.runs.map((f) => f.totalMs)))})`,
  );
  const ratio = total / r.criticalPathMs;
  const worstSpread = Math.max(...all((f) => f.startSpread));
  console.log(`critical path (${criticalCalls(w)} model calls)        ${r.criticalPathMs} ms  → ratio ${ratio.toFixed(2)} ×`);
  console.log(
    `gaps (median, ms): submit → first model call ${fmt(m((f) => f.submitToFirstCall))}; plan reply → first task call (dispatch) ${fmt(median(all((f) => f.dispatch)))}; tasks started within ${fmt(median(all((f) => f.startSpread)))} (worst ${fmt(worstSpread)}); tool round ${fmt(median(all((f) => f.toolRound)))}; last task reply → next planner call (join) ${fmt(median(all((f) => f.join)))}; last planner reply → summarizer call (handover) ${fmt(m((f) => f.handover))}; summary reply → terminal event ${fmt(m((f) => f.summaryToTerminalEvent))}, → execution end ${fmt(m((f) => f.summaryToEnd))}`,
  );
  console.log(
    `tasks in flight at once ${fmt(m((f) => f.maxInFlight))} of ${w.tasksPerStep}; model calls ${fmt(m((f) => f.modelCalls))} (critical path needs ${criticalCalls(w)}, the workload ${1 + w.steps * (2 * w.tasksPerStep + 1) + 1})`,
  );
  console.log(
    `DynamoDB requests per run ${fmt(m((f) => f.dynamoRequests))}; per GET /v1/runs/{id} ${fmt(m((f) => f.getRunRequests))}; state transitions ${fmt(m((f) => f.stateTransitions))}; GetExecutionHistory calls ${fmt(m((f) => f.historyCalls))} (most ${fmt(Math.max(...r.runs.map((f) => f.historyCalls)))})`,
  );
  const ops = [...new Set(r.runs.flatMap((f) => Object.keys(f.operations)))].sort();
  console.log(`  by operation (median): ${ops.map((op) => `${op} ${fmt(m((f) => f.operations[op] ?? 0))}`).join(", ")}`);
  console.log(
    `CPU per run ${fmt(m((f) => f.cpuMs))} ms, of which the main thread ${fmt(m((f) => f.mainThreadBusyMs))} ms (the handlers, the API and the interpreter share it; dynalite has a thread of its own); peak RSS ${fmt(r.maxRssMiB)} MiB (now ${fmt(r.rssAfterMiB)} MiB); start-up ${fmt(r.startMs)} ms`,
  );
  const { targets } = w;
  /** "met (75)" or "not met (1.31 ×)". */
  const verdict = (value: number, limit: number, shown = fmt(value)) => `${value <= limit ? "met" : "not met"} (${shown})`;
  console.log(
    [
      `targets: ratio ≤ ${targets.ratio} × ${verdict(ratio, targets.ratio, `${ratio.toFixed(2)} ×`)}`,
      targets.startSpreadMs !== undefined
        ? `all tasks started within ${targets.startSpreadMs} ms ${verdict(worstSpread, targets.startSpreadMs)}`
        : "",
      targets.dynamoRequests !== undefined
        ? `DynamoDB requests ≤ ${targets.dynamoRequests} ${verdict(
            m((f) => f.dynamoRequests),
            targets.dynamoRequests,
          )}`
        : "",
    ]
      .filter(Boolean)
      .join("; "),
  );
}
