import type { RunRecord } from "../contracts/run.js";
import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import { ConflictError } from "../errors.js";
import { endRun } from "./lifecycle.js";
import { type ResumePorts, stopExecutionOf } from "./resume.js";

/**
 * Cancelling a run, whichever door asks (REST, MCP's cancel_run and tasks/cancel, A2A's CancelTask,
 * a rollback in its session): the run ends cancelled and its execution stops (the status-change
 * notification sends the webhook). A run that has ended is a conflict that changes nothing.
 */
export async function cancelRun(ports: ResumePorts, run: RunRecord, reason: string): Promise<void> {
  if (TERMINAL_STATUSES.has(run.status))
    throw new ConflictError(`Run ${run.runId} has already ended (${run.status}).`, { status: run.status });
  if (!(await endRun(ports, run.runId, "cancelled", { error: { code: "cancelled", message: reason } }))) {
    const now = await ports.runs.get(run.runId);
    throw new ConflictError(`Run ${run.runId} has already ended (${now?.status}).`, { status: now?.status });
  }
  await stopExecutionOf(ports, run, reason);
}
