import type { EventBody } from "../contracts/events.js";
import type { RunRecord } from "../contracts/run.js";
import { FINAL_STEP_ERRORS, NotFoundError } from "../errors.js";
import { countMetric } from "../observability.js";
import type { Ports } from "../ports/index.js";

/** What ending a run touches: the run, its event log, its interrupts and the tenant's slots. */
export type EndRunPorts = Pick<Ports, "runs" | "events" | "activeRuns" | "interrupts">;

export type TerminalStatus = "succeeded" | "failed" | "timed_out" | "cancelled" | "interrupted" | "blocked" | "budget_exhausted";
const RUN_ENDED_METRIC: Record<TerminalStatus, string> = {
  succeeded: "RunsSucceeded",
  failed: "RunsFailed",
  timed_out: "RunsTimedOut",
  cancelled: "RunsCancelled",
  interrupted: "RunsInterrupted",
  blocked: "RunsBlocked",
  budget_exhausted: "RunsBudgetExhausted",
};

/**
 * Runs that failed for a reason of Stepwise's or of what it depends on (retries spent on the model
 * or AWS, a crashed step, a start that could not be made), not of the run's own input or agent: the
 * metric an operator's alarm watches (RunsFailed counts users' failures too).
 */
export const RUN_FAULT_METRIC = "RunFaults";

/** Whether a run ending with this status and error code is a fault of the service (see RUN_FAULT_METRIC). */
export function isRunFault(status: TerminalStatus, errorCode: string | undefined): boolean {
  return status === "failed" && !(FINAL_STEP_ERRORS as readonly string[]).includes(errorCode ?? "");
}

/**
 * The one place a run ends: moves it to a terminal status once (a conditional write, so a late or
 * repeated step cannot end it twice), records the terminal event, closes its open interrupts and
 * gives the tenant's run slot back. Returns false if the run had already ended.
 */
export async function endRun(
  ports: EndRunPorts,
  runId: string,
  status: TerminalStatus,
  details: { result?: string; files?: string[]; error?: { code: string; message: string }; byRunId?: string } = {},
): Promise<boolean> {
  const terminalEvent = (record: RunRecord): EventBody =>
    status === "budget_exhausted"
      ? {
          type: "run.budget_exhausted",
          data: { result: record.result ?? "", files: record.files ?? [], stopReason: record.stopReason ?? "Stopped at the budget." },
        }
      : status === "succeeded"
        ? {
            type: "run.succeeded",
            data: {
              result: details.result ?? record.result ?? "",
              files: details.files ?? record.files ?? [],
              ...(record.stopReason ? { stopReason: record.stopReason } : {}),
            },
          }
        : status === "failed"
          ? { type: "run.failed", data: { error: details.error ?? { code: "failed", message: "The run failed." } } }
          : status === "blocked"
            ? { type: "run.blocked", data: { check: details.error?.code ?? "guardrail", reason: details.error?.message ?? status } }
            : status === "interrupted"
              ? {
                  type: "run.interrupted",
                  data: { reason: details.error?.message ?? status, ...(details.byRunId ? { byRunId: details.byRunId } : {}) },
                }
              : { type: status === "timed_out" ? "run.timed_out" : "run.cancelled", data: { reason: details.error?.message ?? status } };
  // One conditional write moves the run to its terminal status and claims the slot's release.
  const patch = { status, endedAt: new Date().toISOString(), ...(details.error ? { error: details.error } : {}) };
  const ended = await ports.runs.end(runId, patch, ["queued", "running", "awaiting_input"]);
  if (!ended) {
    // Ended before; if that step died before writing the terminal event, write it now (the slot
    // was claimed for release by the write that ended the run, and is not given back twice).
    const record = await ports.runs.get(runId);
    if (!record) throw new NotFoundError(`run ${runId} not found`);
    if (record.status === status && !(await ports.events.tip(runId)).closed) {
      await ports.events.append(runId, [terminalEvent(record)], { close: true });
    }
    return false;
  }
  countMetric(RUN_ENDED_METRIC[status]);
  if (isRunFault(status, details.error?.code)) countMetric(RUN_FAULT_METRIC);
  // All at once: the slot (a client that sees the run ended may submit the next one at once), the
  // terminal event (which closes the log) and the run's open interrupts.
  await Promise.all([
    ports.activeRuns.release(ended.tenantId),
    ports.events.append(runId, [terminalEvent(ended)], { close: true }),
    ports.interrupts
      .list(runId)
      .then((all) =>
        Promise.all(
          all
            .filter((i) => i.status === "pending")
            .map((i) => ports.interrupts.transition(runId, i.interruptId, status === "timed_out" ? "timed_out" : "cancelled")),
        ),
      ),
  ]);
  return true;
}

/**
 * Step Functions reported that the execution ended. Normally the run has ended already; if the
 * execution crashed, was aborted or timed out without reaching our states, the run ends here.
 */
export async function reconcileExecutionEnd(
  ports: EndRunPorts,
  runId: string,
  execution: { status: string; error?: string | null; cause?: string | null },
): Promise<void> {
  const status: TerminalStatus | undefined = (
    { SUCCEEDED: "succeeded", FAILED: "failed", TIMED_OUT: "timed_out", ABORTED: "cancelled" } as const
  )[execution.status as "SUCCEEDED"];
  if (!status) return;
  const message = execution.error
    ? describeCause({ Error: execution.error, Cause: execution.cause ?? undefined })
    : `The execution ended ${execution.status.toLowerCase()}.`;
  await endRun(ports, runId, status, status === "succeeded" ? {} : { error: { code: execution.error || status, message } });
}

/** Lambda puts `{"errorType","errorMessage",...}` in Cause; other errors give plain text. */
export function describeCause(error: { Error: string; Cause?: string }): string {
  if (!error.Cause) return error.Error;
  try {
    const parsed = JSON.parse(error.Cause) as { errorMessage?: string; errorType?: string };
    if (parsed.errorMessage) return `${parsed.errorType ?? error.Error}: ${parsed.errorMessage}`.slice(0, 2_000);
  } catch {
    // not JSON: use it as it is
  }
  return error.Cause.slice(0, 2_000);
}
