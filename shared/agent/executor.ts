import { formatPlan } from "../contracts/plan.js";
import type { ExecuteTaskInput, TaskResult } from "../contracts/steps.js";
import { NotFoundError } from "../errors.js";
import type { TaskRecord } from "../store/tasks.js";
import type { RunRecord } from "../contracts/run.js";
import { budgetsOf } from "../memory/session.js";
import { runAgentLoop, type RunScope } from "./loop.js";
import { executorPrompt } from "./prompts.js";

export type ExecuteTaskOutput = TaskResult;

/**
 * One executor solves one task of the current step. It sees the request, the plan and the results
 * of earlier steps (the run memory at the fork point) plus its own task; its own rounds are kept in
 * its own journal scope, so parallel executors never see each other's half-finished work.
 */
export async function executeTask(run: RunScope, input: ExecuteTaskInput): Promise<ExecuteTaskOutput> {
  const { services } = run;
  const { iteration, task } = input;
  const [record, earlier, own] = await Promise.all([
    services.runs.get(run.runId),
    services.tasks.list(run.runId),
    services.journal.load(run.runId, scopeOf(input)),
  ]);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const tools = await services.tools.registryFor(record.tenantId, "executor", { runId: record.runId });
  const mine = earlier.find((t) => t.iteration === iteration && t.taskId === task.taskId);
  const startedAt = mine?.startedAt ?? new Date().toISOString();
  if (own.size === 0) {
    await Promise.all([
      services.tasks.put(run.runId, { ...(mine ?? newTaskRecord(input)), status: "pending", startedAt }),
      services.events.append(run.runId, [
        { type: "task.started", data: { taskId: task.taskId, title: task.title, iteration, stepIndex: mine?.stepIndex ?? -1 } },
      ]),
    ]);
  }

  // The fork point: what this executor knows is fixed the first time it runs and kept in its journal,
  // so a retried or resumed executor sees exactly the same memory.
  const { value: forked } = await own.once(0, "memo", "fork", async () => forkContext(record, earlier, iteration, mine?.text ?? task.title));

  const outcome = await runAgentLoop(run, {
    scope: scopeOf(input),
    role: "executor",
    taskId: task.taskId,
    system: async () => executorPrompt({ files: (await services.files.list(run.runId)).map((f) => f.name) }),
    conversation: [{ role: "user", content: forked }],
    tools,
    maxRounds: budgetsOf(services, record).maxRounds,
    toolConcurrency: services.config.TOOL_CONCURRENCY,
    toolApproval: record.approval?.tools,
    journal: own,
  });
  if (outcome.kind === "paused") return { ...input, done: false };
  if (outcome.kind === "ended") return { ...input, done: true, status: "failed", preview: "The run ended before this task finished." };
  if (outcome.kind === "interrupted") return { ...input, done: false, interruptId: outcome.interruptId };

  const status = outcome.kind === "answer" ? "succeeded" : "failed";
  return finishTask(run, input, status, outcome.text, { ...(mine ?? newTaskRecord(input)), startedAt });
}

/** The run memory up to the fork: the request, the plan, every earlier step's results (in task order), and this task. */
function forkContext(record: RunRecord, earlier: TaskRecord[], iteration: number, task: string): string {
  // TaskStore.list returns them in iteration, then task order: the merge order.
  const priorResults = earlier
    .filter((t) => t.iteration < iteration && t.status !== "pending")
    .map((t) => `- ${t.title}: ${t.status === "failed" ? "FAILED: " : ""}${(t.result ?? "").slice(0, 1_500)}`);
  return [
    `Request: ${record.input}`,
    record.plan ? `\n${formatPlan(record.plan)}` : "",
    priorResults.length ? `\nResults so far:\n${priorResults.join("\n")}` : "",
    `\nYour task: ${task}`,
  ].join("\n");
}

/**
 * Records a task's end (also used when the state machine caught a crash of the executor, which
 * passes no record: it is read here).
 */
export async function finishTask(
  run: RunScope,
  input: ExecuteTaskInput,
  status: "succeeded" | "failed",
  result: string,
  known?: TaskRecord,
): Promise<ExecuteTaskOutput> {
  const { services } = run;
  const { iteration, task } = input;
  const existing = known ?? (await services.tasks.list(run.runId, iteration)).find((t) => t.taskId === task.taskId) ?? newTaskRecord(input);
  await Promise.all([
    services.tasks.put(run.runId, { ...existing, status, result, endedAt: new Date().toISOString() }),
    services.events.append(run.runId, [
      { type: "task.completed", data: { taskId: task.taskId, title: task.title, iteration, status, result: result.slice(0, 2_000) } },
    ]),
  ]);
  return { ...input, done: true, status, preview: result.slice(0, 200) };
}

/** A task the planner did not record (a Map item given by hand): its title is all there is. */
const newTaskRecord = ({ iteration, task }: ExecuteTaskInput): TaskRecord => ({
  iteration,
  stepIndex: -1,
  taskId: task.taskId,
  title: task.title,
  text: task.title,
  status: "pending",
});

export const scopeOf = (input: Pick<ExecuteTaskInput, "iteration"> & { task: Pick<ExecuteTaskInput["task"], "taskId"> }) => `task#${input.iteration}#${input.task.taskId}`;
