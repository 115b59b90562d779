import type { RunEvent } from "../contracts/events.js";
import type { Multitask, RunRecord } from "../contracts/run.js";
import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import { ConflictError } from "../errors.js";
import { writeTurn } from "../memory/session.js";
import type { Ports } from "../ports/index.js";
import { cancelRun } from "./cancel.js";
import { endRun } from "./lifecycle.js";
import { type ResumePorts, stopExecutionOf } from "./resume.js";

/** What moving a session's queue touches: the session, the runs, their executions and event logs. */
export type SessionQueuePorts = Pick<Ports, "sessions" | "runs" | "executions" | "events">;

/** A run sent to a session with a run in flight, under `reject`: 409, with the run in the way. */
export class SessionBusyError extends ConflictError {
  constructor(sessionId: string, active: { runId: string; status?: string; links?: RunRecord["links"] }) {
    super(
      `Session ${sessionId} has a run in flight (${active.runId}). Wait for it to end, or send the run with multitask "enqueue", "interrupt" or "rollback".`,
      {
        activeRunId: active.runId,
        status: active.status,
        links: active.links,
      },
    );
  }
}

/**
 * The run is done with its session (its execution has ended, or it never started): an interrupted
 * run's finished work joins the session first, then the first run waiting takes the session and
 * its execution starts. Safe to repeat: an execution is named after its run, so a second start
 * starts nothing.
 */
export async function leaveSession(ports: SessionQueuePorts, run: RunRecord): Promise<void> {
  const next = await handOver(ports, run);
  if (next) await startTurn(ports, next);
}

/** Starts the execution of the run whose turn it is; a failed run resumed in the queue continues its own (redrive). */
async function startTurn(ports: SessionQueuePorts, runId: string): Promise<void> {
  if (await ports.executions.start(runId)) return;
  const run = await ports.runs.get(runId);
  if (!run) return;
  // It continues at the step that failed, past the one that marks a run running.
  if (run.status === "queued") await ports.runs.update(runId, { status: "running" }, ["queued"]);
  // Refused (false) when the execution runs already: a repeated hand-over.
  await ports.executions.redrive(run.executionArn, `${run.runId}-${run.updatedAt}`);
}

/**
 * The run's execution is at its last step: the session goes to the next waiting run before the run
 * reads as ended, so a client that sees it ended can send the next message at once. That run's
 * execution is started when this one's has ended (leaveSession, from its status change: a step has
 * no right to start executions).
 */
export async function handOverAtEnd(ports: Omit<SessionQueuePorts, "executions">, runId: string): Promise<void> {
  const run = await ports.runs.get(runId);
  if (run) await handOver(ports, run);
}

/** Writes an interrupted run's turn, then passes the session on; returns the run that has it now. */
async function handOver(ports: Omit<SessionQueuePorts, "executions">, run: RunRecord): Promise<string | undefined> {
  if (run.status === "interrupted" && run.turn !== undefined) await writeTurn(ports, run, await finishedWork(ports, run));
  let now = await ports.sessions.release(run.tenantId, run.sessionId, run.runId);
  while (now.activeRunId) {
    const next = await ports.runs.get(now.activeRunId);
    // Not recorded yet: its submit is under way and starts it.
    if (!next) return undefined;
    // A waiting run that was cancelled gives its place on.
    if (!TERMINAL_STATUSES.has(next.status)) return next.runId;
    now = await ports.sessions.release(run.tenantId, run.sessionId, now.activeRunId);
  }
  return undefined;
}

/**
 * What an interrupted run finished, as its answer in the session: its answer if it had one, else the
 * results of the tasks and tool calls that completed before it stopped.
 */
async function finishedWork(ports: Pick<Ports, "events">, run: RunRecord): Promise<string> {
  if (run.result) return run.result;
  const done: string[] = [];
  for (let after = 0; ; ) {
    const page: RunEvent[] = await ports.events.list(run.runId, after, 500);
    for (const event of page) {
      if (event.type === "task.completed" && event.data.status === "succeeded") done.push(`- ${event.data.title}: ${event.data.result}`);
      if (event.type === "tool.result" && event.data.ok && !event.data.taskId) done.push(`- ${event.data.tool}: ${event.data.output}`);
    }
    const last = page.at(-1);
    if (page.length < 500 || !last) break;
    after = last.seq;
  }
  const head = "(Interrupted by a newer message before it finished.)";
  return done.length ? `${head} Done so far:\n${done.join("\n")}` : head;
}

/**
 * A new run waits behind the session's run in flight; under `interrupt` that run is stopped at its
 * next safe point (it reads as ended at its next check, between model or tool calls, and a write tool
 * it has begun completes), under `rollback` it is cancelled and its turn taken out of the session.
 * Either way the new run starts when the stopped run's execution has ended (see leaveSession).
 */
export async function makeWay(
  ports: ResumePorts & SessionQueuePorts,
  strategy: Multitask,
  activeRunId: string,
  newRunId: string,
): Promise<void> {
  if (strategy !== "interrupt" && strategy !== "rollback") return;
  const active = await ports.runs.get(activeRunId);
  if (!active) return;
  if (strategy === "rollback") {
    if (!TERMINAL_STATUSES.has(active.status)) {
      await cancelRun(ports, active, `Rolled back: a newer message to the session (${newRunId}) took its place.`).catch((error) => {
        if (!(error instanceof ConflictError)) throw error; // it ended meanwhile: its turn goes all the same
      });
    }
    if (active.turn !== undefined) await ports.sessions.removeTurn(active.tenantId, active.sessionId, active.runId, active.turn);
    return;
  }
  if (TERMINAL_STATUSES.has(active.status)) return;
  const reason = `A newer message to the session (${newRunId}) interrupted the run.`;
  if (!(await endRun(ports, active.runId, "interrupted", { error: { code: "interrupted", message: reason }, byRunId: newRunId }))) return;
  // A run waiting for a person is at a safe point already: its execution stops now.
  if (active.status === "awaiting_input" || active.status === "queued") await stopExecutionOf(ports, active, reason);
}
