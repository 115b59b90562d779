import { TASK_PAGE_SIZE } from "../contracts/api.js";
import { runBudgetView } from "../contracts/budget.js";
import type { Interrupt } from "../contracts/interrupts.js";
import type { RunRecord } from "../contracts/run.js";
import type { FileMeta } from "../ports/files.js";
import type { TaskRecord } from "../ports/tasks.js";
import { utf8Bytes } from "../text/bytes.js";
import { type TaskPageQuery, type TaskView, taskPage, taskView, VIEW_BUDGET_BYTES } from "./taskView.js";

export interface Links {
  /** Base URL of the API, e.g. https://abc.execute-api.eu-west-1.amazonaws.com */
  api: string;
  /** Base URL of the stream (the Function URL), without a trailing slash. */
  stream: string;
  console: boolean;
}

export function runLinks(runId: string, executionArn: string, links: Links) {
  const region = executionArn.split(":")[3] ?? "us-east-1";
  return {
    self: `${links.api}/v1/runs/${runId}`,
    events: `${links.api}/v1/runs/${runId}/events`,
    stream: `${links.stream}/v1/runs/${runId}/stream`,
    ...(links.console
      ? { console: `https://${region}.console.aws.amazon.com/states/home?region=${region}#/v2/executions/details/${executionArn}` }
      : {}),
  };
}

/** What a run's view and its line in a list both open with: who it is, where it stands, how it runs. */
export function runHeadline(run: RunRecord) {
  return {
    runId: run.runId,
    sessionId: run.sessionId,
    status: run.status,
    /** While queued: the run it waits for (the session's run in flight, or the one sent before it). */
    queuedBehind: run.status === "queued" ? (run.queuedBehind ?? null) : null,
    requestedMode: run.requestedMode,
    mode: run.mode ?? null,
  };
}

/** A fork of a run as its parent's view lists it. */
export interface ForkLine {
  runId: string;
  at: NonNullable<RunRecord["forkOf"]>["at"];
  status: RunRecord["status"];
  createdAt: string;
}

/**
 * What `GET /v1/runs/{id}` returns: the record without tenant internals, plus its files, its forks,
 * links, and a page of its tasks (each result previewed, linked whole) that keeps the whole view
 * within VIEW_BUDGET_BYTES; `nextTasksCursor` pages on through `GET /v1/runs/{id}/tasks`.
 */
export function runView(
  run: RunRecord,
  tasks: TaskRecord[],
  files: FileMeta[],
  interrupts: Interrupt[],
  links: Links,
  stateTransitions?: number,
  forks: ForkLine[] = [],
  page: TaskPageQuery = { limit: TASK_PAGE_SIZE },
) {
  const usage = withTaskUsage(run.usage, tasks);
  const view = {
    ...runHeadline(run),
    statusDetail: statusDetail(run),
    input: run.input,
    metadata: run.metadata,
    plan: run.plan ?? null,
    tasks: [] as TaskView[],
    taskCount: tasks.length,
    nextTasksCursor: null as string | null,
    approval: run.approval ?? { plan: false, tools: "none" },
    agent: run.agent ? { name: run.agent.name, version: run.agent.version, tools: run.agent.tools ?? null } : null,
    instructions: run.instructions ?? null,
    pendingInterrupts: interrupts.filter((i) => i.status === "pending").map(interruptView),
    interrupts: interrupts.map(interruptView),
    result: run.result ?? null,
    ...(run.stopReason ? { stopReason: run.stopReason } : {}),
    ...(run.replayOf ? { replayOf: run.replayOf } : {}),
    ...(run.forkOf ? { forkOf: run.forkOf } : {}),
    forks,
    evaluation: run.evaluation ?? null,
    files,
    error: run.error ?? null,
    usage: { ...usage, ...(stateTransitions !== undefined ? { stateTransitions } : {}) },
    budget: run.budget ? runBudgetView(run.budget, usage.promptTokens + usage.completionTokens) : null,
    executionArn: run.executionArn,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    endedAt: run.endedAt ?? null,
    links: runLinks(run.runId, run.executionArn, links),
  };
  // The tasks get what the rest of the view leaves of the budget (and a cursor in it).
  const rest = utf8Bytes(JSON.stringify(view)) + CURSOR_ROOM;
  const shown = taskPage(tasks, page, VIEW_BUDGET_BYTES - rest, (task) => taskView(task, files, links.api, run.runId));
  view.tasks = shown.tasks;
  view.nextTasksCursor = shown.nextCursor;
  return view;
}

/** A cursor and the fields the API adds to a view (its estimated cost) fit in this. */
const CURSOR_ROOM = 1_000;

/** What a running run waits for: a model call to be retried, said as a person would. */
function statusDetail(run: RunRecord): string | null {
  const wait = run.status === "running" ? run.modelWait : undefined;
  if (!wait) return null;
  const who = wait.taskId ? `${wait.agent} ${wait.taskId}` : wait.agent;
  return `Waiting for the model (${who}): ${wait.reason}; retry ${wait.attempt} of ${wait.retries} at ${wait.retryAt}.`;
}

/** The run's own usage (router, planner, summarizer, ReAct agent) plus each task's (kept on the task record, not on a hot run item). */
function withTaskUsage(usage: RunRecord["usage"], tasks: TaskRecord[]): RunRecord["usage"] {
  const total = { ...usage };
  for (const task of tasks) {
    for (const [name, value] of Object.entries(task.usage ?? {})) {
      const key = name as keyof typeof total;
      if (typeof value === "number") (total as Record<string, number>)[key] = ((total as Record<string, number>)[key] ?? 0) + value;
    }
  }
  return total;
}

/** An interrupt as clients see it (the store never returns the task token). */
export function interruptView(interrupt: Interrupt) {
  const { schemaVersion: _v, ...view } = interrupt;
  return view;
}
