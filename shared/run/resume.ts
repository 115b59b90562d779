import { DescribeExecutionCommand, ExecutionDoesNotExist, RedriveExecutionCommand, StartExecutionCommand, StopExecutionCommand } from "@aws-sdk/client-sfn";
import { TERMINAL_STATUSES, type RunRecord } from "../contracts/run.js";
import { ConflictError, errorMessage, FINAL_STEP_ERRORS } from "../errors.js";
import type { Services } from "../services.js";
import { endRun, reconcileExecutionEnd } from "./lifecycle.js";
import { TooManyRunsError } from "./submit.js";

/** What Step Functions says of a run's execution; "missing" when it was never started. */
export type ExecutionState = "RUNNING" | "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED" | "PENDING_REDRIVE" | "missing";

export async function executionState(services: Services, run: RunRecord): Promise<ExecutionState> {
  try {
    const { status } = await services.sfn.send(new DescribeExecutionCommand({ executionArn: run.executionArn }));
    return (status ?? "RUNNING") as ExecutionState;
  } catch (error) {
    if (error instanceof ExecutionDoesNotExist) return "missing";
    throw error;
  }
}

/**
 * Puts an execution back behind a run in flight whose execution is gone: a failed, aborted or
 * timed-out one is redriven (it continues at the step that did not finish; the journal replays
 * the rest), one never started is started. Returns false if there is nothing to do or it cannot.
 */
async function restartExecution(services: Services, run: RunRecord, state: ExecutionState): Promise<boolean> {
  try {
    if (state === "missing") {
      const stateMachineArn = services.config.STATE_MACHINE_ARN!;
      await services.sfn.send(new StartExecutionCommand({ stateMachineArn, name: run.runId, input: JSON.stringify({ runId: run.runId }) }));
      return true;
    }
    if (state === "FAILED" || state === "TIMED_OUT" || state === "ABORTED") {
      await services.sfn.send(new RedriveExecutionCommand({ executionArn: run.executionArn, clientToken: `${run.runId}-${run.updatedAt}`.slice(0, 64) }));
      return true;
    }
  } catch (error) {
    const name = (error as Error).name;
    if (name === "ExecutionNotRedrivable" || name === "ExecutionAlreadyExists" || name === "ExecutionLimitExceeded") return false;
    throw error;
  }
  return false;
}

/**
 * `POST /v1/runs/{id}/resume`. A failed run continues where it failed: the run reopens (taking a
 * slot of the tenant's limit again) and its execution is redriven. A run in flight whose execution
 * has gone gets one again. Anything else is a conflict that changes nothing.
 */
export async function resumeRun(services: Services, run: RunRecord): Promise<RunRecord> {
  const state = await executionState(services, run);
  if (!TERMINAL_STATUSES.has(run.status)) {
    if (state === "RUNNING" || state === "PENDING_REDRIVE") throw new ConflictError(`Run ${run.runId} is ${run.status}; there is nothing to resume.`, { status: run.status });
    if (!(await restartExecution(services, run, state))) {
      await reconcileExecutionEnd(services, run.runId, { status: state === "missing" ? "FAILED" : state, error: "ExecutionLost", cause: "The run's execution ended and cannot be continued." });
      throw new ConflictError(`Run ${run.runId}'s execution ended (${state}) and cannot be continued; the run has ended.`, { execution: state });
    }
    return run;
  }
  if (run.status !== "failed") {
    throw new ConflictError(`Only a failed run can be resumed; run ${run.runId} is ${run.status}.`, { status: run.status });
  }
  if (run.error && (FINAL_STEP_ERRORS as readonly string[]).includes(run.error.code)) {
    throw new ConflictError(`Run ${run.runId} failed with ${run.error.code}, which running it again cannot change; submit it again instead.`, { error: run.error.code });
  }
  if (state !== "FAILED" && state !== "TIMED_OUT") {
    throw new ConflictError(`Run ${run.runId}'s execution is ${state === "missing" ? "gone" : state} and cannot be redriven.`, { execution: state });
  }
  if (!(await services.activeRuns.acquire(run.tenantId, services.config.MAX_ACTIVE_RUNS_PER_TENANT))) {
    throw new TooManyRunsError(services.config.MAX_ACTIVE_RUNS_PER_TENANT, 5);
  }
  const reopened = await services.runs.reopen(run.runId, ["failed"]);
  if (!reopened) {
    await services.activeRuns.release(run.tenantId);
    throw new ConflictError(`Run ${run.runId} changed while it was being resumed; read it again.`);
  }
  await services.events.append(run.runId, [{ type: "run.resumed", data: { redrive: true } }], { reopen: true });
  if (!(await restartExecution(services, run, state))) {
    await endRun(services, run.runId, "failed", { error: run.error ?? { code: "failed", message: "The run failed." } });
    throw new ConflictError(`Run ${run.runId}'s execution cannot be redriven (Step Functions refused it); the run stays failed.`, { execution: state });
  }
  return (await services.runs.get(run.runId))!;
}

/**
 * Stops a cancelled run's execution. An execution already gone (or ended) sends no status change,
 * so the run's terminal notification is queued here instead.
 */
export async function stopExecutionOf(services: Services, run: RunRecord, reason: string): Promise<void> {
  const state = await executionState(services, run);
  if (state === "RUNNING") {
    try {
      await services.sfn.send(new StopExecutionCommand({ executionArn: run.executionArn, error: "Cancelled", cause: reason }));
      return;
    } catch (error) {
      if (!(error instanceof ExecutionDoesNotExist)) throw error;
    }
  }
  await services.notifyQueue.send({ kind: "ended", runId: run.runId }).catch((error) =>
    console.error(JSON.stringify({ msg: "terminal notification not queued", runId: run.runId, error: errorMessage(error) })),
  );
}

/**
 * A person decided an interrupt, but the waiting task's token is dead. If the execution still
 * runs, it will store a fresh token and see the decision; if it has gone, it is restarted (the
 * "Wait for …" state runs again and finds the decision). Returns false when the run cannot go on:
 * it has then been ended.
 */
export async function resumeAfterDeadToken(services: Services, run: RunRecord): Promise<boolean> {
  const state = await executionState(services, run);
  if (state === "RUNNING" || state === "PENDING_REDRIVE") return true;
  if (await restartExecution(services, run, state)) return true;
  await reconcileExecutionEnd(services, run.runId, { status: state === "missing" ? "FAILED" : state, error: "ExecutionLost", cause: "The run's execution ended while it waited for a decision." });
  return false;
}
