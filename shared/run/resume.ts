import type { RunRecord } from "../contracts/run.js";
import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import { ConflictError, errorMessage, FINAL_STEP_ERRORS, NotFoundError } from "../errors.js";
import type { ExecutionState } from "../ports/executions.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import { endRun, reconcileExecutionEnd } from "./lifecycle.js";
import { leaveSession, type SessionQueuePorts } from "./sessionQueue.js";
import { TooManyRunsError } from "./submit.js";

/** The ports resuming and stopping use: runs, the event log, slots, executions and the notifier. */
export type ResumePorts = Pick<Ports, "runs" | "events" | "activeRuns" | "interrupts" | "executions" | "notifyQueue"> &
  SettingsOf<"limits">;

function executionState(ports: Pick<Ports, "executions">, run: RunRecord): Promise<ExecutionState> {
  return ports.executions.describe(run.executionArn);
}

/**
 * Puts an execution back behind a run in flight whose execution is gone: a failed, aborted or
 * timed-out one is redriven (it continues at the step that did not finish; the journal replays
 * the rest), one never started is started. Returns false if there is nothing to do or it cannot.
 */
async function restartExecution(ports: Pick<Ports, "executions">, run: RunRecord, state: ExecutionState): Promise<boolean> {
  if (state === "missing") return ports.executions.start(run.runId);
  if (state === "FAILED" || state === "TIMED_OUT" || state === "ABORTED")
    return ports.executions.redrive(run.executionArn, `${run.runId}-${run.updatedAt}`);
  return false;
}

/**
 * Resuming a run, whichever door asks (`POST /v1/runs/{id}/resume`). A failed run continues where
 * it failed: the run reopens (taking a slot of the tenant's limit again) and claims its session like
 * a new run; its execution is redriven at once, or when its turn comes. A run in flight whose
 * execution has gone gets one again. Anything else is a conflict that changes nothing.
 */
export async function resumeRun(ports: ResumePorts & SessionQueuePorts, run: RunRecord): Promise<RunRecord> {
  const state = await executionState(ports, run);
  if (
    run.status === "queued" &&
    state === "missing" &&
    (await ports.sessions.runs(run.tenantId, run.sessionId)).waiting.includes(run.runId)
  ) {
    throw new ConflictError(`Run ${run.runId} waits for run ${run.queuedBehind} in its session; it starts when its turn comes.`, {
      status: run.status,
      queuedBehind: run.queuedBehind,
    });
  }
  if (!TERMINAL_STATUSES.has(run.status)) {
    if (state === "RUNNING" || state === "PENDING_REDRIVE")
      throw new ConflictError(`Run ${run.runId} is ${run.status}; there is nothing to resume.`, { status: run.status });
    if (!(await restartExecution(ports, run, state))) {
      await reconcileExecutionEnd(ports, run.runId, {
        status: state === "missing" ? "FAILED" : state,
        error: "ExecutionLost",
        cause: "The run's execution ended and cannot be continued.",
      });
      throw new ConflictError(`Run ${run.runId}'s execution ended (${state}) and cannot be continued; the run has ended.`, {
        execution: state,
      });
    }
    return run;
  }
  if (run.status !== "failed") {
    throw new ConflictError(`Only a failed run can be resumed; run ${run.runId} is ${run.status}.`, { status: run.status });
  }
  if (run.error && (FINAL_STEP_ERRORS as readonly string[]).includes(run.error.code)) {
    throw new ConflictError(
      `Run ${run.runId} failed with ${run.error.code}, which running it again cannot change; submit it again instead.`,
      { error: run.error.code },
    );
  }
  if (state !== "FAILED" && state !== "TIMED_OUT") {
    throw new ConflictError(`Run ${run.runId}'s execution is ${state === "missing" ? "gone" : state} and cannot be redriven.`, {
      execution: state,
    });
  }
  if (!(await ports.activeRuns.acquire(run.tenantId, ports.settings.limits.maxActiveRunsPerTenant))) {
    throw new TooManyRunsError(ports.settings.limits.maxActiveRunsPerTenant, 5);
  }
  const reopened = await ports.runs.reopen(run.runId, ["failed"]);
  if (!reopened) {
    await ports.activeRuns.release(run.tenantId);
    throw new ConflictError(`Run ${run.runId} changed while it was being resumed; read it again.`);
  }
  // Through its session's queue like any other run: it takes a new turn, after the turns sent while
  // it lay failed, and waits while another run has the session (leaveSession redrives it then).
  const claim = await ports.sessions.claim(run.tenantId, run.sessionId, run.runId, { queue: true });
  if (claim.outcome === "busy") throw new Error("A claim that may queue is never refused.");
  await ports.runs.update(run.runId, {
    turn: claim.turn,
    ...(claim.outcome === "queued" ? { status: "queued", queuedBehind: claim.behind } : {}),
  });
  await ports.events.append(
    run.runId,
    [
      { type: "run.resumed", data: { redrive: true } },
      ...(claim.outcome === "queued"
        ? [{ type: "run.queued_behind" as const, data: { runId: claim.behind, activeRunId: claim.activeRunId, position: claim.position } }]
        : []),
    ],
    { reopen: true },
  );
  if (claim.outcome === "active" && !(await restartExecution(ports, run, state))) {
    await endRun(ports, run.runId, "failed", { error: run.error ?? { code: "failed", message: "The run failed." } });
    const ended = await ports.runs.get(run.runId);
    if (ended) await leaveSession(ports, ended);
    throw new ConflictError(`Run ${run.runId}'s execution cannot be redriven (Step Functions refused it); the run stays failed.`, {
      execution: state,
    });
  }
  const resumed = await ports.runs.get(run.runId);
  if (!resumed) throw new NotFoundError(`Run ${run.runId} not found.`);
  return resumed;
}

/**
 * Stops a cancelled run's execution. An execution already gone (or ended) sends no status change,
 * so the run's terminal notification is queued here instead.
 */
export async function stopExecutionOf(ports: ResumePorts, run: RunRecord, reason: string): Promise<void> {
  const state = await executionState(ports, run);
  if (state === "RUNNING") {
    if (await ports.executions.stop(run.executionArn, "Cancelled", reason)) return;
  }
  await ports.notifyQueue
    .send({ kind: "ended", runId: run.runId })
    .catch((error) =>
      console.error(JSON.stringify({ msg: "terminal notification not queued", runId: run.runId, error: errorMessage(error) })),
    );
}

/**
 * A person decided an interrupt, but the waiting task's token is dead. If the execution still
 * runs, it will store a fresh token and see the decision; if it has gone, it is restarted (the
 * "Wait for …" state runs again and finds the decision). Returns false when the run cannot go on:
 * it has then been ended.
 */
export async function resumeAfterDeadToken(ports: ResumePorts, run: RunRecord): Promise<boolean> {
  const state = await executionState(ports, run);
  if (state === "RUNNING" || state === "PENDING_REDRIVE") return true;
  if (await restartExecution(ports, run, state)) return true;
  await reconcileExecutionEnd(ports, run.runId, {
    status: state === "missing" ? "FAILED" : state,
    error: "ExecutionLost",
    cause: "The run's execution ended while it waited for a decision.",
  });
  return false;
}
