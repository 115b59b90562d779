import type { UndoneCall } from "../contracts/events.js";
import { formatPlan } from "../contracts/plan.js";
import type { RunStatus } from "../contracts/run.js";
import { type ExecuteTaskInput, scopeOf, type TaskResult } from "../contracts/steps.js";
import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import { NotFoundError } from "../errors.js";
import { seesImages as roleSeesImages, toolCapFor } from "../llm/roleSettings.js";
import { fitText, MAX_INLINE_BYTES } from "../memory/largeText.js";
import { budgetsOf } from "../memory/session.js";
import { shareBudget } from "../memory/share.js";
import { namesOfTask } from "../ports/files.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import type { StepContext, TaskRecord } from "../ports/tasks.js";
import { endToolScope } from "../ports/tools.js";
import { withToolSearch } from "../tools/toolSearch.js";
import { quietly } from "./backgroundWrites.js";
import { uploadedImageParts, withImages } from "./images.js";
import { budgetStop, EMPTY_ANSWER_ERROR, type LoopPorts, type LoopUsage, type RunScope, runAgentLoop } from "./loop.js";
import { asFileLines, executorPrompt, fileLines, toolLines } from "./prompts.js";
import { portsForAgent } from "./savedAgent.js";
import { ScopeJournal } from "./scopeJournal.js";

export type ExecuteTaskOutput = TaskResult;

/** An executor: the loop's ports, its task and step records, and the tenant's tools. */
export type ExecutorPorts = LoopPorts & Pick<Ports, "tasks" | "tools"> & SettingsOf<"budgets" | "model" | "files">;

/** Recording a task's end: its record, its event, and a file when the result is long. */
export type FinishTaskPorts = Pick<Ports, "tasks" | "files" | "events">;

/**
 * One executor solves one task of the current step. It sees the request, the plan and the results
 * of earlier steps (the run memory at the fork point, written once by the planner for the step)
 * plus its own task; its own rounds are kept in its own journal scope, so parallel executors never
 * see each other's half-finished work.
 *
 * Before its first model call it makes one round trip: the step's context with the run's status
 * (one request), and its journal; its start time is written with its first round's records. Its
 * task record is written once, at the end, with its last journal records.
 */
export async function runExecutor(run: RunScope<ExecutorPorts>, input: ExecuteTaskInput): Promise<ExecuteTaskOutput> {
  const { ports } = run;
  const { iteration, task } = input;
  const scope = scopeOf(input);
  const [{ step: stored, status }, own] = await Promise.all([
    ports.tasks.stepAndRunStatus(run.runId, iteration),
    ScopeJournal.load(ports.journal, run.runId, scope),
  ]);
  const step = stored ?? (await legacyStepContext(run, iteration));
  // A saved agent's executors get only its tools, with its own model settings.
  // The run's guardrails hold for its executors too: their streamed text and answers are checked.
  const asAgent = {
    ...run,
    ports: portsForAgent(ports, step.agent),
    guardrails: step.guardrails,
    tenantId: step.tenantId,
    maxSandboxes: step.maxSandboxes,
  };
  const spec = step.tasks.find((t) => t.taskId === task.taskId) ?? { taskId: task.taskId, title: task.title, text: task.title };
  const maxTools = toolCapFor("executor", asAgent.ports.settings.model.roles);
  const tools = withToolSearch(await asAgent.ports.tools.registryFor(step.tenantId, { runId: run.runId }), maxTools);
  const fresh = own.size === 0;
  const startedAt = fresh ? new Date().toISOString() : (own.get(0, "memo", "start") as string | undefined);
  const pendingEvents: Promise<unknown>[] = [];
  if (fresh) {
    own.record(0, "memo", "start", startedAt);
    pendingEvents.push(
      quietly(
        ports.events.append(run.runId, [
          { type: "task.started", data: { taskId: task.taskId, title: task.title, iteration, stepIndex: step.stepIndex } },
        ]),
      ),
    );
  }

  let files = asFileLines(step.files) ?? fileLines(await ports.files.list(run.runId));
  const seesImages = roleSeesImages("executor", ports.settings.model.roles);
  const images = seesImages
    ? await uploadedImageParts(ports.files, run.runId, await ports.files.list(run.runId), ports.settings.files)
    : [];
  const catalog = toolLines(tools);
  const outcome = await runAgentLoop(asAgent, {
    scope,
    role: "executor",
    taskId: task.taskId,
    system: async (round) => {
      // The list changes only when a write tool ran in the round before.
      if (round > 0 && own.hasAny(round - 1, "intent")) files = fileLines(await ports.files.list(run.runId));
      return executorPrompt({ tools: catalog, files, instructions: step.instructions, seesImages });
    },
    conversation: [{ role: "user", content: withImages(forkContext(step, spec.text), images) }],
    tools,
    maxTools,
    maxRounds: step.maxRounds,
    toolConcurrency: ports.settings.budgets.toolConcurrency,
    toolApproval: step.approvalTools,
    toolFailures: step.toolFailures,
    ...(seesImages ? { toolImages: ports.settings.files } : {}),
    journal: own,
    runActive: status !== undefined && !TERMINAL_STATUSES.has(status as RunStatus),
  });
  const events = quietly(Promise.all([...pendingEvents, outcome.events]));
  const record: TaskRecord = {
    iteration,
    stepIndex: step.stepIndex,
    taskId: task.taskId,
    title: spec.title,
    text: spec.text,
    status: "pending",
    startedAt,
  };
  if (outcome.kind === "paused" || outcome.kind === "interrupted" || outcome.kind === "ended") {
    // What this turn spent is in the journal: the task record counts it when the task ends.
    await Promise.all([outcome.journal.flush(), events]);
    if (outcome.kind === "paused") return { ...input, done: false };
    if (outcome.kind === "interrupted") return { ...input, done: false, interruptId: outcome.interruptId };
    await endToolScope(tools, run.runId, scope);
    return { ...input, done: true, status: "failed", preview: "The run ended before this task finished." };
  }
  await endToolScope(tools, run.runId, scope);
  const ended = outcome.kind === "answer" ? "succeeded" : "failed";
  const text = outcome.kind === "empty" ? EMPTY_ANSWER_ERROR : outcome.text;
  // Out of rounds, the executor still delivered a summary of what it did and did not do: not done, but said so.
  const stopReason = outcome.kind === "budget" ? (outcome.exhausted ?? budgetStop(outcome.rounds)) : undefined;
  const undone = own.undoneCalls();
  return finishTask(run, input, ended, text, {
    record,
    journal: outcome.journal,
    events,
    usage: own.usage(),
    stopReason,
    ...(undone.length ? { undone } : {}),
  });
}

/** The run memory up to the fork: the request, the plan, every earlier step's results (in task order), and this task. */
function forkContext(step: StepContext, task: string): string {
  return [
    `Request: ${step.request}`,
    step.plan ? `\n${formatPlan(step.plan)}` : "",
    step.priorResults.length ? `\nResults so far:\n${step.priorResults.join("\n")}` : "",
    `\nYour task: ${task}`,
  ].join("\n");
}

/** Characters of earlier results a step's context carries at most. */
const MAX_PRIOR_RESULTS_CHARS = 200_000;
/** UTF-8 bytes of earlier results at most: with the request (up to 96 KB of CJK input) and the plan, the step context stays under ~350 KB. */
const MAX_PRIOR_RESULTS_BYTES = 150_000;

/** Earlier steps' results for the next step's executors, and the files that hold whole the ones cut to fit. */
export interface PriorResults {
  lines: string[];
  /** Results cut to fit, to be stored whole as run files before the executors start (the lines point to them). */
  files: { name: string; text: string; title: string }[];
}

/**
 * Earlier steps' results as the planner hands them to the next step's executors: `before`, then
 * these tasks'. Whole when they fit `budgetChars` together (the executor's share of its prompt);
 * otherwise the long ones share what is left, each cut with a line naming the run file that holds
 * it whole and how to read it.
 */
export function priorResultsOf(
  tasks: TaskRecord[],
  iteration: number,
  before: string[] = [],
  budgetChars = MAX_PRIOR_RESULTS_CHARS,
): PriorResults {
  const ended = tasks.filter((t) => t.iteration < iteration && t.status !== "pending");
  const results = ended.map((t) => t.result ?? "");
  const share = (room: number) => {
    const texts = shareBudget(results, Math.max(0, room), (i) => {
      const name = resultFileName(ended[i]);
      return `the whole result is the run's file ${name}: read it with read_artifact {"filename": "${name}"}, then on from the offset it gives`;
    });
    return { texts, lines: [...before, ...ended.map((t, i) => `- ${t.title}: ${t.status === "failed" ? "FAILED: " : ""}${texts[i]}`)] };
  };
  let room = Math.min(budgetChars, MAX_PRIOR_RESULTS_CHARS) - before.reduce((sum, line) => sum + line.length, 0);
  let shared = share(room);
  // The budget is in characters, the item's limit in bytes (CJK text is 3 bytes a character): shrink until it fits.
  for (let bytes = byteLengthOf(shared.lines); bytes > MAX_PRIOR_RESULTS_BYTES && room > 0; bytes = byteLengthOf(shared.lines)) {
    room = Math.floor((room * MAX_PRIOR_RESULTS_BYTES) / bytes) - 1_000;
    shared = share(room);
  }
  const { texts, lines } = shared;
  const files = ended.flatMap((t, i) =>
    // A result longer than its record holds was stored whole under this name when the task ended.
    texts[i] !== results[i] && Buffer.byteLength(results[i]) <= MAX_INLINE_BYTES
      ? [{ name: resultFileName(t), text: results[i], title: t.title }]
      : [],
  );
  return { lines, files };
}

const byteLengthOf = (lines: string[]) => lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);

/** The run file a task's whole result is kept in when it is too long to pass on inline. */
const resultFileName = (task: Pick<TaskRecord, "iteration" | "taskId">) =>
  `result-${task.iteration}-${task.taskId}.md`.replace(/[^\w.-]/g, "_");

/** A step the planner did not describe (a Map item given by hand, or a run from before step contexts): read it from the run. */
async function legacyStepContext(run: RunScope<ExecutorPorts>, iteration: number): Promise<StepContext> {
  const [record, tasks] = await Promise.all([run.ports.runs.get(run.runId), run.ports.tasks.list(run.runId)]);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const mine = tasks.filter((t) => t.iteration === iteration);
  return {
    iteration,
    stepIndex: mine[0]?.stepIndex ?? -1,
    tenantId: record.tenantId,
    request: record.input,
    plan: record.plan,
    priorResults: priorResultsOf(tasks, iteration).lines,
    approvalTools: record.approval?.tools,
    toolFailures: record.toolFailures,
    maxSandboxes: record.maxSandboxes,
    instructions: record.instructions,
    agent: record.agent,
    maxRounds: budgetsOf(run.ports, record).maxRounds,
    tasks: mine.map(({ taskId, title, text }) => ({ taskId, title, text })),
  };
}

/**
 * Records a task's end: the task record (with the journal's last records, one batch) and the
 * task.completed event, which lists the files the task's tools wrote. Also used when the state machine caught a crash of the executor, which
 * passes nothing else: the record is read here.
 */
export async function finishTask(
  run: { runId: string; ports: FinishTaskPorts },
  input: ExecuteTaskInput,
  status: "succeeded" | "failed",
  result: string,
  known: {
    record?: TaskRecord;
    journal?: ScopeJournal;
    events?: Promise<unknown>;
    usage?: Partial<LoopUsage>;
    stopReason?: string;
    /** Tool calls a person declined: the task is not done as planned. */
    undone?: UndoneCall[];
  } = {},
): Promise<ExecuteTaskOutput> {
  const { ports } = run;
  const { iteration, task } = input;
  const [existing, kept, files] = await Promise.all([
    known.record ?? ports.tasks.get(run.runId, iteration, task.taskId).then((found) => found ?? newTaskRecord(input)),
    fitText(ports.files, run.runId, resultFileName({ iteration, taskId: task.taskId }), result),
    ports.files.list(run.runId).then((all) => namesOfTask(all, task.taskId)),
  ]);
  const record: TaskRecord = {
    ...existing,
    status,
    result: kept,
    endedAt: new Date().toISOString(),
    ...(known.usage ? { usage: known.usage } : {}),
    ...(known.stopReason ? { stopReason: known.stopReason } : {}),
    ...(known.undone ? { undone: known.undone } : {}),
  };
  // task.completed waits for the task's events written in the background (its streamed text):
  // readers take it as the task's last word.
  const completed = Promise.resolve(known.events).then(() =>
    ports.events.append(run.runId, [
      {
        type: "task.completed",
        data: {
          taskId: task.taskId,
          title: task.title,
          iteration,
          status,
          result: kept.slice(0, 2_000),
          files,
          ...(known.stopReason ? { stopReason: known.stopReason } : {}),
          ...(known.undone ? { undone: known.undone } : {}),
        },
      },
    ]),
  );
  await Promise.all([known.journal ? known.journal.flush({ tasks: [record] }) : ports.tasks.put(run.runId, record), completed]);
  return { ...input, done: true, status, preview: kept.slice(0, 200) };
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
