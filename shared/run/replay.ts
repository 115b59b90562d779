import { ANSWERED } from "../contracts/answers.js";
import type { EventBody, RunEvent } from "../contracts/events.js";
import {
  ExportedRun,
  type ForkPoint,
  ForkRunRequest,
  type PlanEdit,
  type ReplayComparison,
  ReplayRunRequest,
} from "../contracts/replay.js";
import type { RunRecord } from "../contracts/run.js";
import { TERMINAL_EVENTS, TERMINAL_STATUSES } from "../contracts/terminal.js";
import { BadRequestError, ConflictError, NotFoundError } from "../errors.js";
import type { Ports } from "../ports/index.js";
import { type Inherited, type JournalRecord, withinScope } from "../ports/journal.js";
import { utf8Bytes } from "../text/bytes.js";
import { type ForkLine, type Links, runLinks } from "../views/runView.js";
import { InputTooLongError } from "./acceptRun.js";
import { readDivergence } from "./replayDivergence.js";
import { newId, type SubmitPorts, submitRun } from "./submit.js";

/** What replaying and forking touch: submitting's ports, the journal they copy, the session listing. */
export type LineagePorts = SubmitPorts &
  Pick<Ports, "journal"> & {
    listings: { touchSession(tenantId: string, sessionId: string, runId: string, createdAt: string): Promise<void> };
  };

/**
 * Replays an ended run on the current code, whichever door asks: a new run in its session, marked
 * `replayOf`, whose journal is the recorded run's, every record inherited as `replay`. Each model
 * and tool call is answered from it; a call it lacks, or a model call asked differently, is never
 * made: the replay stops there and records where (compareReplay tells). It writes no turn to the
 * session. A run still in flight is a conflict, and nothing starts.
 */
export async function replayRun(ports: LineagePorts, parent: RunRecord, body: unknown, links: Links): Promise<RunRecord> {
  const request = parsed(ReplayRunRequest, body);
  assertEnded(parent, "replayed");
  const records = inheritable(await ports.journal.readRun(parent.runId), "replay");
  if (records.length === 0) throw new ConflictError(`Run ${parent.runId} has no journal to replay (it made no model call).`);
  return start(ports, parent, {
    input: parent.input,
    instructions: request.instructions ?? parent.instructions,
    lineage: { replayOf: parent.runId },
    records,
    links,
  });
}

/** How many of a session's newest runs are read for a run's forks: one bounded listing, no list kept on the parent. */
export const FORKS_READ = 100;

/**
 * The forks of a run, oldest first. A fork is a run of its parent's session marked `forkOf`, made
 * after it, so they are found in one listing of the session's runs created since the parent (the
 * index is read no further back). The parent keeps only a count of its forks (`forkCount`, an atomic
 * add that forks made at once cannot overwrite): a run never forked, most runs, costs no listing,
 * so polling its status is one read.
 */
export async function forksOf(ports: Pick<Ports, "listings">, run: RunRecord): Promise<ForkLine[]> {
  if (!run.forkCount) return [];
  const page = await ports.listings.runs(run.tenantId, { sessionId: run.sessionId, since: run.createdAt, limit: FORKS_READ });
  return page.items
    .flatMap((r) => (r.forkOf?.runId === run.runId ? [{ runId: r.runId, at: r.forkOf.at, status: r.status, createdAt: r.createdAt }] : []))
    .reverse();
}

/**
 * Forks an ended run: a new run in its session, marked `forkOf`, that reuses the recorded calls
 * before the fork point (inherited as `fork`: nothing there calls the model again), with the edits
 * applied, then continues live. A fork point or an edited call the run does not have is refused
 * naming it, and nothing starts.
 */
export async function forkRun(ports: LineagePorts, parent: RunRecord, body: unknown, links: Links): Promise<RunRecord> {
  const { at, edits = {} } = parsed(ForkRunRequest, body);
  assertEnded(parent, "forked");
  const all = inheritable(await ports.journal.readRun(parent.runId), "fork");
  const scope = all.filter((r) => r.scope === at.scope);
  if (scope.length === 0)
    throw new NotFoundError(`Run ${parent.runId} has no agent scope "${at.scope}" to fork at; its scopes: ${scopesOf(all).join(", ")}.`);
  const last = Math.max(...scope.map((r) => r.round));
  if (at.round > last + 1)
    throw new NotFoundError(
      `Scope "${at.scope}" of run ${parent.runId} has rounds 0 to ${last}; there is no round ${at.round} to fork at.`,
    );
  const kept = all.filter((record) => before(record, at));
  const answered = (edits.answers ?? []).map(({ callId, answer }) => ({
    callId,
    output: `${ANSWERED}${answer}`,
    ok: true,
    question: true,
  }));
  const records = withPlan(withEdits(kept, at, [...(edits.toolResults ?? []), ...answered]), at, edits.plan);
  const input = edits.input ?? parent.input;
  const limit = ports.settings.limits.maxInputBytes;
  const bytes = utf8Bytes(input);
  if (bytes > limit) throw new InputTooLongError(bytes, limit);
  // Counted before it starts: a fork whose start fails costs its parent's view one listing, never a fork unseen.
  if (!(await ports.runs.countFork(parent.runId))) throw new NotFoundError(`Run ${parent.runId} is gone.`);
  return start(ports, parent, {
    input,
    instructions: parent.instructions,
    lineage: { forkOf: { runId: parent.runId, at } },
    records,
    links,
  });
}

/** The new run, through the same submit as any other, its journal written before its execution starts. */
async function start(
  ports: LineagePorts,
  parent: RunRecord,
  run: { input: string; instructions?: string; lineage: Pick<RunRecord, "replayOf" | "forkOf">; records: JournalRecord[]; links: Links },
): Promise<RunRecord> {
  const { run: started } = await submitRun(
    ports,
    parent.tenantId,
    {
      input: run.input,
      mode: parent.requestedMode,
      ...(parent.deepThink !== undefined ? { deepThink: parent.deepThink } : {}),
      sessionId: parent.sessionId,
      // It waits its turn in the session rather than being refused.
      multitask: "enqueue",
      metadata: parent.metadata,
      ...(parent.approval ? { approval: parent.approval } : {}),
      ...(parent.budgets ? { budgets: parent.budgets } : {}),
    },
    {
      links: run.links,
      lineage: run.lineage,
      ...(run.instructions ? { instructions: run.instructions } : {}),
      ...(parent.agent ? { agent: parent.agent } : {}),
      ...(parent.maxSandboxes ? { maxSandboxes: parent.maxSandboxes } : {}),
      ...(parent.toolFailures ? { toolFailures: parent.toolFailures } : {}),
      // A fork calls models and tools from its fork point on, so the parent's guardrails check it as
      // they checked the parent; a replay calls nothing (a moderation or judge check would be a call).
      ...(run.lineage.forkOf && parent.guardrails?.length ? { guardrails: parent.guardrails } : {}),
      beforeStart: (runId) => ports.journal.commit(runId, { records: run.records }),
    },
  );
  await ports.listings.touchSession(started.tenantId, started.sessionId, started.runId, started.createdAt);
  return started;
}

function parsed<T>(
  schema: {
    safeParse(
      value: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  body: unknown,
): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
  throw new BadRequestError(
    `The request does not fit: ${details.map((d) => `${d.path || "body"}: ${d.message}`).join("; ")}`,
    details,
    "validation_failed",
  );
}

function assertEnded(run: RunRecord, what: string): void {
  if (!TERMINAL_STATUSES.has(run.status))
    throw new ConflictError(`Run ${run.runId} is ${run.status}; only an ended run can be ${what}.`, { status: run.status });
}

/** The records a new run may inherit: the calls, not a replay's own finding, marked as where they come from. */
function inheritable(records: readonly JournalRecord[], inherited: Inherited): JournalRecord[] {
  return records.filter((r) => r.scope !== "replay").map((r) => ({ ...r, inherited }));
}

const scopesOf = (records: readonly JournalRecord[]) => [...new Set(records.map((r) => r.scope))].sort();

/**
 * When an agent scope runs, in the order of a run: the router, each plan iteration i ("plan#i")
 * and the tasks it hands out ("task#i#…", side by side), the summary. A ReAct run has one scope.
 */
function phaseOf(scope: string): number {
  const [family, iteration] = scope.split("#");
  if (family === "route") return -1;
  if (family === "plan") return 2 * Number(iteration);
  if (family === "task") return 2 * Number(iteration) + 1;
  if (family === "summary") return Number.MAX_SAFE_INTEGER;
  return 0;
}

/**
 * Whether a record was made before the fork point: an earlier round of the same scope, a scope
 * that ran before it, or a sibling task of the same step (it ran beside it and does not depend on it).
 */
function before(record: JournalRecord, at: ForkPoint): boolean {
  if (withinScope(record.scope, at.scope)) return record.round < at.round;
  const mine = phaseOf(record.scope);
  const theirs = phaseOf(at.scope);
  return mine < theirs || (mine === theirs && record.scope.startsWith("task#") && at.scope.startsWith("task#"));
}

/** The calls of the model replies among `records` within `scope`. */
const callsOf = (records: readonly JournalRecord[], scope: string) =>
  records
    .filter((r) => r.kind === "llm" && withinScope(r.scope, scope))
    .flatMap((r) =>
      ((r.value as { toolCalls?: { id: string; name: string; arguments: string }[] }).toolCalls ?? []).map((call) => ({ record: r, call })),
    );

/**
 * The kept records with the edited tool results (an answer edit must edit a question); an edit of a
 * call the kept records lack is refused naming it.
 */
function withEdits(
  kept: JournalRecord[],
  at: ForkPoint,
  edits: readonly { callId: string; output: string; ok?: boolean; question?: boolean }[],
): JournalRecord[] {
  const records = [...kept];
  for (const edit of edits) {
    const call = callsOf(records, at.scope).find(({ call }) => call.id === edit.callId)?.call;
    if (edit.question && call && call.name !== "ask_user")
      throw new BadRequestError(`Call ${edit.callId} is a ${call.name} call, not a question (ask_user): edit its result with toolResults.`);
    const index = records.findIndex((r) => r.kind === "tool" && r.callId === edit.callId && withinScope(r.scope, at.scope));
    if (index < 0)
      throw new NotFoundError(
        `No tool call ${edit.callId} of scope "${at.scope}" before round ${at.round} to edit; its calls: ${
          records
            .filter((r) => r.kind === "tool" && withinScope(r.scope, at.scope))
            .map((r) => r.callId)
            .join(", ") || "none"
        }.`,
      );
    const recorded = records[index];
    const value = recorded.value as { ok?: boolean; output?: string };
    records[index] = { ...recorded, value: { ...value, ok: edit.ok ?? value.ok ?? true, output: edit.output } };
  }
  return records;
}

/**
 * The kept records with the plan iteration's plan edited: the last planning call that made the plan
 * (create or update) in the fork's scope before its round gets the edited steps, so the fork's
 * planner makes that plan (the planning tool runs again: it is pure) and its steps run live.
 */
function withPlan(records: JournalRecord[], at: ForkPoint, plan: PlanEdit | undefined): JournalRecord[] {
  if (!plan) return records;
  if (!/^plan#\d+$/.test(at.scope))
    throw new BadRequestError(`A plan edit forks a plan iteration ("plan#<i>"), not "${at.scope}".`, undefined, "validation_failed");
  const planning = callsOf(records, at.scope)
    .filter(({ call }) => call.name === "planning" && /"command"\s*:\s*"(create|update)"/.test(call.arguments))
    .at(-1);
  if (!planning)
    throw new NotFoundError(`Scope "${at.scope}" made no plan (a planning create or update call) before round ${at.round} to edit.`);
  const { record, call } = planning;
  const reply = record.value as { toolCalls: { id: string; arguments: string }[] };
  const args = JSON.parse(call.arguments) as Record<string, unknown>;
  const edited = { ...args, ...(plan.title ? { title: plan.title } : {}), steps: plan.steps };
  const value = {
    ...reply,
    toolCalls: reply.toolCalls.map((c) => (c.id === call.id ? { ...c, arguments: JSON.stringify(edited) } : c)),
  };
  return records.map((r) => (r === record ? { ...r, value } : r));
}

/**
 * What a replay found: still running; diverged at a call (the first the code asked for that the
 * journal lacks or recorded otherwise, both sides); failed otherwise; or, once it succeeded, its
 * events compared with the recorded run's (see sameEvents): identical, or the first that differs.
 */
export async function compareReplay(ports: Pick<Ports, "runs" | "events" | "journal">, replay: RunRecord): Promise<ReplayComparison> {
  const replayOf = replay.replayOf;
  if (!replayOf) throw new NotFoundError(`Run ${replay.runId} is not a replay.`);
  const base = { runId: replay.runId, replayOf };
  if (!TERMINAL_STATUSES.has(replay.status)) return { ...base, status: "running" };
  const divergence = await readDivergence(ports.journal, replay.runId);
  if (divergence) return { ...base, status: "diverged", divergence };
  if (replay.status !== "succeeded" && replay.status !== "failed")
    return { ...base, status: "failed", error: replay.error ?? { code: replay.status, message: `The replay ended ${replay.status}.` } };
  const [recorded, replayed] = await Promise.all([allEvents(ports, replayOf), allEvents(ports, replay.runId)]);
  // The record ends before its terminal event lands (they are written side by side): until the
  // log is closed there is more to compare, and comparing now would miss the run's last event.
  if (!TERMINAL_EVENTS.has(replayed.at(-1)?.type ?? "")) return { ...base, status: "running" };
  const difference = firstDifference(bySource(recorded, replayOf), bySource(replayed, replay.runId));
  if (difference) return { ...base, status: "diverged", event: difference, eventsCompared: recorded.length };
  return { ...base, status: "identical", eventsCompared: recorded.length };
}

async function allEvents(ports: Pick<Ports, "events">, runId: string): Promise<RunEvent[]> {
  const all: RunEvent[] = [];
  for (;;) {
    const page = await ports.events.list(runId, all.at(-1)?.seq ?? 0, 1_000);
    all.push(...page);
    if (page.length < 1_000) return all;
  }
}

/** Streamed text, retries and withdrawals depend on timing, not on the code: text is compared joined. */
const TEXT = new Set(["agent.delta", "agent.thought"]);
/**
 * The summarizer's and the router's text is their answer, compared in run.succeeded; whether it
 * also streamed depends on the model, and a replay asks none.
 */
const ANSWERING = new Set(["summarizer", "router"]);
const TIMING = new Set(["agent.reasoning", "agent.withdrawn", "model.retrying", "run.resumed", "run.queued_behind"]);
/** An online eval scores a run after its end, and never a replay: not part of what the code did. */
const AFTER_END = "eval.scored";
/** Files are what write tools made, and a replay makes none: their events and lists are not compared. */
const FILES = "file.created";

/**
 * The events of each agent in order (parallel tasks interleave by timing): per source ("run", or the
 * task's id), each event's type and data with the run's own id written as "<run>" (links name it),
 * then each agent's text joined, apart: streamed text is written in the background, so under load
 * it lands after the agent's next events (its tool call, its task.completed), while a replay, which
 * streams nothing, writes it in place. Where text falls among the events is timing, not code.
 */
function bySource(events: readonly RunEvent[], runId: string): Map<string, unknown[]> {
  const sources = new Map<string, unknown[]>();
  const texts = new Map<string, Map<string, string>>();
  for (const { type, data } of events) {
    if (
      TIMING.has(type) ||
      type === FILES ||
      type === AFTER_END ||
      (TEXT.has(type) && ANSWERING.has(String((data as { agent?: string }).agent)))
    )
      continue;
    const taskId = (data as { taskId?: string }).taskId;
    const source = taskId ?? "run";
    const { files: _made, ...rest } = data as Record<string, unknown>;
    const normal = JSON.parse(JSON.stringify(rest).replaceAll(runId, "<run>")) as Record<string, unknown>;
    if (TEXT.has(type)) {
      const agents = texts.get(source) ?? new Map<string, string>();
      texts.set(source, agents);
      const agent = String(normal.agent);
      agents.set(agent, (agents.get(agent) ?? "") + String(normal.text));
      continue;
    }
    const list = sources.get(source) ?? [];
    sources.set(source, list);
    list.push({ type, data: normal });
  }
  for (const [source, agents] of texts) {
    const list = sources.get(source) ?? [];
    sources.set(source, list);
    for (const agent of [...agents.keys()].sort()) list.push({ type: "agent.text", data: { agent, text: agents.get(agent) } });
  }
  return sources;
}

function firstDifference(recorded: Map<string, unknown[]>, replayed: Map<string, unknown[]>): ReplayComparison["event"] {
  for (const source of new Set([...recorded.keys(), ...replayed.keys()])) {
    const a = recorded.get(source) ?? [];
    const b = replayed.get(source) ?? [];
    for (let index = 0; index < Math.max(a.length, b.length); index++) {
      if (JSON.stringify(a[index]) !== JSON.stringify(b[index]))
        return { source, index, recorded: a[index] ?? null, replayed: b[index] ?? null };
    }
  }
  return undefined;
}

/** A run as a file: its record, its journal and its events, to replay elsewhere (`stepwise replay --dir`). */
export async function exportRun(ports: Pick<Ports, "journal" | "events">, run: RunRecord): Promise<ExportedRun> {
  const [journal, events] = await Promise.all([ports.journal.readRun(run.runId), allEvents(ports, run.runId)]);
  return { format: "stepwise.run/1", run, journal, events };
}

/**
 * An exported run (exportRun's document, from this stack or another) recorded in the caller's
 * tenant, ended as it was, so it can be replayed here: a new run id (the old one is rewritten
 * wherever its journal and events name it) in a session of its own, `importedFrom` the old id.
 * What does not travel is left behind: its files' bytes, its webhook, its lineage. A document that
 * does not fit, a run that had not ended, events without their terminal event or a journal
 * without a model call are refused naming the problem, and nothing is recorded: the run record,
 * which makes it visible, is written last.
 */
export async function importRun(
  ports: Pick<Ports, "runs" | "journal" | "events" | "executions">,
  tenantId: string,
  body: unknown,
  links: Links,
): Promise<RunRecord> {
  const exported = parsed(ExportedRun, body);
  const { run: recorded, journal, events } = exported;
  if (!TERMINAL_STATUSES.has(recorded.status))
    throw new BadRequestError(`The exported run ${recorded.runId} is ${recorded.status}; only an ended run can be imported.`);
  if (!TERMINAL_EVENTS.has(events.at(-1)?.type ?? ""))
    throw new BadRequestError(
      `The events of the exported run ${recorded.runId} do not end with its terminal event (run.succeeded, run.failed, …).`,
    );
  if (!journal.some((r) => r.kind === "llm" && r.scope !== "replay"))
    throw new BadRequestError(`The exported run ${recorded.runId} has no model call in its journal: there is nothing to replay.`);
  const runId = newId("run");
  const renamed = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll(recorded.runId, runId)) as T;
  const executionArn = ports.executions.arnFor(runId);
  const now = new Date().toISOString();
  const {
    webhook: _webhook,
    idempotencyKey: _key,
    queuedBehind: _behind,
    replayOf: _replayOf,
    forkOf: _forkOf,
    terminalSeq: _seq,
    modelWait: _wait,
    turn: _turn,
    ...kept
  } = renamed(recorded);
  const run: RunRecord = {
    ...kept,
    runId,
    tenantId,
    sessionId: newId("ses"),
    newSession: true,
    executionArn,
    links: runLinks(runId, executionArn, links),
    files: [],
    importedFrom: recorded.runId,
    createdAt: now,
    updatedAt: now,
    endedAt: now,
  };
  await ports.journal.commit(runId, { records: renamed(journal) });
  await ports.events.append(
    runId,
    renamed(events).map(({ type, data }) => ({ type, data }) as EventBody),
    { close: true },
  );
  await ports.runs.create(run);
  return run;
}
