/**
 * Where events become a view: one reducer from a run's events (the contract in
 * contracts/events.ts) to what a reader knows of the run. The CLI, the web console, the AG-UI view
 * and the tests all fold with it; each then shows the fold its own way. Pure and free of Node
 * (the console bundles it): `foldRun(run, event)` returns a new FoldedRun and never changes the
 * one it was given, so a reader may keep the fold before an event to see what the event changed.
 *
 * Folding is deterministic and resumable: folding a prefix of a log and then the rest gives the
 * fold of the whole log, an event at or below the last sequence number folded changes nothing
 * (a stream may repeat one), and an event of a type this code does not know only advances `seq`
 * (the event log may gain types; a reader ignores those it does not know).
 */
import type { RunEvent, UndoneCall } from "../contracts/events.js";
import type { Plan } from "../contracts/plan.js";
import { TERMINAL_EVENTS } from "../contracts/terminal.js";

/** Who an event's text belongs to: an agent, and the task when an executor speaks. */
export interface TextSource {
  agent: string;
  taskId?: string;
}

/** One key per agent and task: two executors' texts never mix. */
export const sourceKey = (source: TextSource) => `${source.agent}:${source.taskId ?? ""}`;

/** The source of an event's data, for events that name an agent. */
export function textSource(data: unknown): TextSource | undefined {
  const agent = (data as { agent?: unknown } | null | undefined)?.agent;
  if (typeof agent !== "string") return undefined;
  const taskId = (data as { taskId?: unknown }).taskId;
  return typeof taskId === "string" ? { agent, taskId } : { agent };
}

/**
 * The text an agent streams (`agent.delta`) or reasons (`agent.reasoning`) since it last did
 * something else. An agent's words arrive twice when its model streams: piece by piece, then whole
 * as `agent.thought`; the thought ends the block, so a reader shows the words once. `seqs` are the
 * events that carried it (withdrawn together by `agent.withdrawn`).
 */
export interface StreamedBlock {
  kind: "text" | "reasoning";
  source: TextSource;
  text: string;
  /** The event that opened the block: it names the block for as long as it lives. */
  startSeq: number;
  seqs: readonly number[];
}

export interface FoldedTask {
  taskId: string;
  title: string;
  iteration: number;
  stepIndex?: number;
  startedAt?: string;
  endedAt?: string;
  status: "running" | "succeeded" | "failed";
  result?: string;
  files?: readonly string[];
  /** Tool calls a person declined: the task ended without them, not done as planned. */
  undone?: readonly UndoneCall[];
}

export interface FoldedCall {
  callId: string;
  source: TextSource;
  tool: string;
  arguments: unknown;
  persona?: string;
  result?: { ok: boolean; output: string };
  /** run_code's code, then its output. */
  code?: { language: string; text?: string; output?: { text: string; ok?: boolean } };
  /** Reports being written, by file name: each `report.delta` adds to its text. */
  reports?: Readonly<Record<string, { format: string; text: string }>>;
  /** The latest stage of a deep search. */
  search?: { stage: string; count: number; detail: string };
}

export type PendingInterrupt = Extract<RunEvent, { type: "interrupt.opened" }>["data"];
export type CreatedFile = Extract<RunEvent, { type: "file.created" }>["data"];
export type GuardrailDecision = Extract<RunEvent, { type: "guardrail.decided" }>["data"];

export type FoldedStatus =
  | "unknown"
  | "queued"
  | "running"
  | "awaiting_input"
  | "succeeded"
  | "failed"
  | "cancelled"
  | "timed_out"
  | "interrupted"
  | "blocked"
  | "budget_exhausted";

export interface FoldedRun {
  /** The last event folded (0: none). */
  seq: number;
  /** The run's status as its events tell it ("unknown" until an event says). */
  status: FoldedStatus;
  mode?: string;
  input?: string;
  /** The run it waits behind in its session, while queued. */
  queuedBehind?: string;
  plan?: Plan;
  /** Tasks by `iteration:taskId`, in the order they started. */
  tasks: ReadonlyMap<string, FoldedTask>;
  /** Text blocks still open, by `kind|agent:task`, in the order they opened. */
  blocks: ReadonlyMap<string, StreamedBlock>;
  /** Tool calls by call id, in the order they were made. */
  calls: ReadonlyMap<string, FoldedCall>;
  /** Interrupts opened and not yet resolved, in the order they opened. */
  pending: ReadonlyMap<string, PendingInterrupt>;
  /** Files by name, as last announced. */
  files: ReadonlyMap<string, CreatedFile>;
  /** Tool sources that could not be reached, with why. */
  unavailableSources: ReadonlyMap<string, string>;
  /** The guardrail checks' decisions other than `pass`, in order. */
  guardrails: readonly GuardrailDecision[];
  result?: string;
  resultFiles?: readonly string[];
  stopReason?: string;
  error?: { code: string; message: string };
  /** The online eval's scores, written after the run ended (or why it was not scored). */
  evaluation?: Extract<RunEvent, { type: "eval.scored" }>["data"];
}

export const EMPTY_RUN: FoldedRun = {
  seq: 0,
  status: "unknown",
  tasks: new Map(),
  blocks: new Map(),
  calls: new Map(),
  pending: new Map(),
  files: new Map(),
  unavailableSources: new Map(),
  guardrails: [],
};

/** The key of a task in `tasks`. */
export const taskKey = (task: { iteration: number; taskId: string }) => `${task.iteration}:${task.taskId}`;
/** The key of a source's open block of a kind in `blocks`. */
export const blockKey = (kind: StreamedBlock["kind"], source: TextSource) => `${kind}|${sourceKey(source)}`;

/** The open block of a source, if it has one. */
export const openBlock = (run: FoldedRun, kind: StreamedBlock["kind"], source: TextSource) => run.blocks.get(blockKey(kind, source));

/** The blocks open in `before` and no longer in `after`: ended (or withdrawn) by the event between them. */
export const endedBlocks = (before: FoldedRun, after: FoldedRun): StreamedBlock[] =>
  [...before.blocks].filter(([key, block]) => after.blocks.get(key)?.startSeq !== block.startSeq).map(([, block]) => block);

/** The fold of a whole log (or of more events after `from`). */
export function foldRunEvents(events: Iterable<RunEvent>, from: FoldedRun = EMPTY_RUN): FoldedRun {
  let run = from;
  for (const event of events) run = foldRun(run, event);
  return run;
}

/** The run after one more event. */
export function foldRun(run: FoldedRun, event: RunEvent): FoldedRun {
  if (event.seq <= run.seq) return run;
  const known = KNOWN.has(event.type);
  let next: FoldedRun = { ...run, seq: event.seq };
  if (!known) return next;
  next = endBlocks(next, event);
  return apply(next, event);
}

/** A text block ends when its agent does something else; a run's end ends them all. */
function endBlocks(run: FoldedRun, event: RunEvent): FoldedRun {
  const source = textSource(event.data);
  let ends: (block: StreamedBlock) => boolean;
  // A check's decision on a streamed window is no act of its agent: the text goes on in the same block.
  if (event.type === "guardrail.decided") return run;
  if (event.type === "agent.delta" || event.type === "agent.reasoning") {
    // Reasoning comes before the reply's text: the text's first piece ends the reasoning.
    if (!event.data.text || event.type === "agent.reasoning") return run;
    ends = (block) => block.kind === "reasoning" && sameSource(block.source, event.data);
  } else if (source) ends = (block) => sameSource(block.source, source);
  else if (event.type === "task.completed")
    ends = (block) => block.source.agent === "executor" && block.source.taskId === event.data.taskId;
  else if (TERMINAL_EVENTS.has(event.type)) ends = () => true;
  else return run;
  if (![...run.blocks.values()].some(ends)) return run;
  return { ...run, blocks: new Map([...run.blocks].filter(([, block]) => !ends(block))) };
}

const sameSource = (a: TextSource, b: TextSource) => sourceKey(a) === sourceKey(b);

function apply(run: FoldedRun, event: RunEvent): FoldedRun {
  return applyWork(run, event) ?? applyRun(run, event as RunLevelEvent);
}

/** An agent at work means the run runs, if no event said so yet. */
const liveOf = (run: FoldedRun) => (run.status === "unknown" || run.status === "queued" ? { status: "running" as const } : {});

/** The events of the run's work: its plan, tasks, streamed text and tool calls (undefined for the others). */
function applyWork(run: FoldedRun, event: RunEvent): FoldedRun | undefined {
  const live = liveOf(run);
  switch (event.type) {
    case "plan.updated":
      return { ...run, ...live, plan: event.data.plan };
    case "task.started": {
      const { taskId, title, iteration, stepIndex } = event.data;
      const task: FoldedTask = { taskId, title, iteration, stepIndex, startedAt: event.at, status: "running" };
      return { ...run, ...live, tasks: put(run.tasks, taskKey(event.data), task) };
    }
    case "task.completed": {
      const { taskId, title, iteration, status, result, files, undone } = event.data;
      const started = run.tasks.get(taskKey(event.data));
      const task: FoldedTask = {
        ...started,
        taskId,
        title,
        iteration,
        status,
        result,
        endedAt: event.at,
        ...(files ? { files } : {}),
        ...(undone?.length ? { undone } : {}),
      };
      return { ...run, ...live, tasks: put(run.tasks, taskKey(event.data), task) };
    }
    case "agent.delta":
    case "agent.reasoning": {
      if (!event.data.text) return run;
      const kind = event.type === "agent.delta" ? "text" : "reasoning";
      const key = blockKey(kind, event.data);
      const open = run.blocks.get(key);
      const block: StreamedBlock = open
        ? { ...open, text: open.text + event.data.text, seqs: [...open.seqs, event.seq] }
        : { kind, source: textSource(event.data) as TextSource, text: event.data.text, startSeq: event.seq, seqs: [event.seq] };
      return { ...run, ...live, blocks: put(run.blocks, key, block) };
    }
    case "agent.thought":
    case "agent.withdrawn":
    case "model.retrying":
      return { ...run, ...live }; // their blocks ended already; the rest is the event's own
    default:
      return applyCall(run, event);
  }
}

/** A tool call, what it reports as it runs, and its result. */
function applyCall(run: FoldedRun, event: RunEvent): FoldedRun | undefined {
  const live = liveOf(run);
  switch (event.type) {
    case "tool.called": {
      const { callId, tool, persona } = event.data;
      const call: FoldedCall = { callId, source: textSource(event.data) as TextSource, tool, arguments: event.data.arguments };
      return { ...run, ...live, calls: put(run.calls, callId, persona ? { ...call, persona } : call) };
    }
    case "tool.result":
      return {
        ...run,
        ...live,
        calls: update(run.calls, event.data, (call) => ({ ...call, result: { ok: event.data.ok, output: event.data.output } })),
      };
    case "code": {
      const { part, language, text, ok } = event.data;
      return {
        ...run,
        calls: update(run.calls, event.data, (call) => ({
          ...call,
          code: part === "source" ? { language, text } : { language, ...call.code, output: ok === undefined ? { text } : { text, ok } },
        })),
      };
    }
    case "report.delta": {
      const { name, format, text } = event.data;
      return {
        ...run,
        calls: update(run.calls, event.data, (call) => ({
          ...call,
          reports: { ...call.reports, [name]: { format, text: (call.reports?.[name]?.text ?? "") + text } },
        })),
      };
    }
    case "report.withdrawn": {
      const { name } = event.data;
      return {
        ...run,
        calls: update(run.calls, event.data, (call) => ({
          ...call,
          reports: { ...call.reports, [name]: { format: call.reports?.[name]?.format ?? "", text: "" } },
        })),
      };
    }
    case "search.progress": {
      const { stage, count, detail } = event.data;
      return { ...run, calls: update(run.calls, event.data, (call) => ({ ...call, search: { stage, count, detail } })) };
    }
    default:
      return undefined;
  }
}

type RunLevelEvent = Extract<
  RunEvent,
  {
    type:
      | "run.queued_behind"
      | "run.started"
      | "run.resumed"
      | "tool_source.unavailable"
      | "interrupt.opened"
      | "interrupt.resolved"
      | "file.created"
      | "run.succeeded"
      | "run.failed"
      | "run.timed_out"
      | "run.cancelled"
      | "run.interrupted"
      | "guardrail.decided"
      | "run.blocked"
      | "eval.scored"
      | "run.budget_exhausted";
  }
>;

/** The events of the run as a whole: its queue, start and end, pauses, files and tool sources. */
function applyRun(run: FoldedRun, event: RunLevelEvent): FoldedRun {
  switch (event.type) {
    case "run.queued_behind":
      return { ...run, status: "queued", queuedBehind: event.data.activeRunId };
    case "run.started":
      return { ...run, status: "running", mode: event.data.mode, input: event.data.input, queuedBehind: undefined };
    case "run.resumed":
      return { ...run, status: run.pending.size > 0 ? "awaiting_input" : "running", error: undefined };
    case "tool_source.unavailable":
      return { ...run, unavailableSources: put(run.unavailableSources, event.data.source, event.data.reason) };
    case "interrupt.opened":
      return { ...run, status: "awaiting_input", pending: put(run.pending, event.data.interruptId, event.data) };
    case "interrupt.resolved": {
      const pending = new Map(run.pending);
      pending.delete(event.data.interruptId);
      const waiting = run.status === "awaiting_input" && pending.size === 0 ? { status: "running" as const } : {};
      return { ...run, ...waiting, pending };
    }
    case "file.created":
      return { ...run, files: put(run.files, event.data.name, event.data) };
    case "run.succeeded": {
      const { result, files, stopReason } = event.data;
      return { ...run, status: "succeeded", result, resultFiles: files, ...(stopReason ? { stopReason } : {}), pending: new Map() };
    }
    case "run.failed":
      return { ...run, status: "failed", error: event.data.error, pending: new Map() };
    case "run.timed_out":
      return { ...run, status: "timed_out", error: { code: "timed_out", message: event.data.reason }, pending: new Map() };
    case "run.cancelled":
      return { ...run, status: "cancelled", error: { code: "cancelled", message: event.data.reason }, pending: new Map() };
    case "run.interrupted":
      return { ...run, status: "interrupted", error: { code: "interrupted", message: event.data.reason }, pending: new Map() };
    case "guardrail.decided":
      return event.data.verdict === "pass" ? run : { ...run, guardrails: [...run.guardrails, event.data] };
    case "run.blocked":
      return { ...run, status: "blocked", error: { code: "blocked", message: event.data.reason }, pending: new Map() };
    case "eval.scored":
      return { ...run, evaluation: event.data };
    case "run.budget_exhausted": {
      const { result, files, stopReason } = event.data;
      return { ...run, status: "budget_exhausted", result, resultFiles: files, stopReason, pending: new Map() };
    }
  }
}

/** Every type of the contract: a new one is folded here or ignored on purpose. */
const KNOWN = new Set<string>([
  "run.started",
  "plan.updated",
  "task.started",
  "agent.thought",
  "agent.delta",
  "agent.reasoning",
  "model.retrying",
  "agent.withdrawn",
  "tool.called",
  "tool.result",
  "code",
  "report.delta",
  "report.withdrawn",
  "search.progress",
  "tool_source.unavailable",
  "task.completed",
  "interrupt.opened",
  "interrupt.resolved",
  "file.created",
  "run.succeeded",
  "run.failed",
  "run.timed_out",
  "run.resumed",
  "run.budget_exhausted",
  "run.cancelled",
  "run.queued_behind",
  "run.interrupted",
  "guardrail.decided",
  "run.blocked",
  "eval.scored",
] satisfies RunEvent["type"][]);

function put<K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> {
  return new Map(map).set(key, value);
}

/** A call's entry changed; progress of a call not seen (a stream resumed after it) starts an entry of its own. */
function update(
  calls: ReadonlyMap<string, FoldedCall>,
  data: TextSource & { callId: string; tool?: string },
  change: (call: FoldedCall) => FoldedCall,
): ReadonlyMap<string, FoldedCall> {
  const call = calls.get(data.callId) ?? {
    callId: data.callId,
    source: textSource(data) as TextSource,
    tool: data.tool ?? "",
    arguments: undefined,
  };
  return put(calls, data.callId, change(call));
}
