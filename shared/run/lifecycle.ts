import { countMetric } from "../observability.js";
import type { RunState } from "../contracts/steps.js";
import type { EventBody } from "../contracts/events.js";
import { TERMINAL_STATUSES, type RunRecord } from "../contracts/run.js";
import { keys } from "../store/keys.js";
import { NotFoundError } from "../errors.js";
import { chooseMode, fixedMode } from "../agent/router.js";
import type { RunScope } from "../agent/loop.js";
import { resumeCallback } from "../agent/interrupts.js";
import { rememberTurn, sessionHistory } from "../memory/session.js";

/** "Start run": mark the run running and decide its mode (or leave it to "Route request"). */
export async function startRun(run: RunScope): Promise<RunState> {
  const { services } = run;
  const record = await services.runs.get(run.runId);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const mode = record.mode ?? fixedMode(record);
  // Only the first delivery moves queued → running and announces it (steps run at least once).
  if (await services.runs.update(run.runId, { status: "running", mode }, ["queued"])) {
    countMetric("RunsStarted");
    await services.events.append(run.runId, [
      { type: "run.started", data: { mode: mode ?? "auto", input: record.input.slice(0, 2_000) } },
    ]);
  }
  return { runId: run.runId, mode: mode ?? "route" };
}

/** "Route request": the router model picks react or plan_solve. */
export async function routeRun(run: RunScope): Promise<RunState> {
  const { services } = run;
  const record = await services.runs.get(run.runId);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  if (record.mode) return { runId: run.runId, mode: record.mode };
  const decision = await chooseMode(run, record.input, await sessionHistory(services, record));
  await services.runs.update(run.runId, { mode: decision.mode, ...(decision.mode === "answer" ? { result: decision.answer, files: [] } : {}) });
  await services.events.append(run.runId, [
    { type: "agent.thought", data: { agent: "router", text: `Mode: ${decision.mode}. ${decision.reason}`.trim() } },
  ]);
  return { runId: run.runId, mode: decision.mode };
}

type TerminalStatus = "succeeded" | "failed" | "timed_out" | "cancelled";
const RUN_ENDED_METRIC: Record<TerminalStatus, string> = { succeeded: "RunsSucceeded", failed: "RunsFailed", timed_out: "RunsTimedOut", cancelled: "RunsCancelled" };

/**
 * The one place a run ends: moves it to a terminal status once (a conditional write, so a late or
 * repeated step cannot end it twice), records the terminal event, closes its open interrupts and
 * gives the tenant's run slot back. Returns false if the run had already ended.
 */
export async function endRun(
  services: RunScope["services"],
  runId: string,
  status: TerminalStatus,
  details: { result?: string; files?: string[]; error?: { code: string; message: string } } = {},
): Promise<boolean> {
  const record = await services.runs.get(runId);
  if (!record) throw new NotFoundError(`run ${runId} not found`);
  const event: EventBody =
    status === "succeeded"
      ? { type: "run.succeeded", data: { result: details.result ?? record.result ?? "", files: details.files ?? record.files ?? [] } }
      : status === "failed"
        ? { type: "run.failed", data: { error: details.error ?? { code: "failed", message: "The run failed." } } }
        : { type: status === "timed_out" ? "run.timed_out" : "run.cancelled", data: { reason: details.error?.message ?? status } };
  if (TERMINAL_STATUSES.has(record.status)) {
    // Ended before; if that step died between ending the run and writing its event, write it now.
    if (record.terminalSeq && record.status === status && !(await services.events.has(runId, record.terminalSeq))) {
      await releaseSlotOnce(services, record);
      await services.events.putAt(runId, record.terminalSeq, [event]);
    }
    return false;
  }
  // Ending the run takes the terminal event's number in the same write: if this step dies before
  // writing the event, a retry finds the number on the run and writes it (above).
  const patch = { status, endedAt: new Date().toISOString(), ...(details.error ? { error: details.error } : {}) };
  const terminalSeq = await services.runs.end(runId, patch, ["queued", "running", "awaiting_input"]);
  if (terminalSeq === undefined) return false;
  countMetric(RUN_ENDED_METRIC[status]);
  // The slot first: a client that sees the run ended may submit the next one at once.
  await releaseSlotOnce(services, record);
  const pending = (await services.interrupts.list(runId)).filter((i) => i.status === "pending");
  await Promise.all([
    services.events.putAt(runId, terminalSeq, [event]),
    ...pending.map((i) => services.interrupts.transition(runId, i.interruptId, status === "timed_out" ? "timed_out" : "cancelled")),
  ]);
  return true;
}

/** Gives the tenant's run slot back, once per run, even when ending the run is retried. */
async function releaseSlotOnce(services: RunScope["services"], record: RunRecord): Promise<void> {
  const claimed = await services.table.setIf(keys.run(record.runId), { slotReleased: true }, { expression: "attribute_not_exists(slotReleased)" });
  if (claimed) await services.activeRuns.release(record.tenantId);
}

/** "Finalize": the run succeeded with the answer stored by the summarizer or the ReAct agent. */
export async function finalizeRun(run: RunScope): Promise<{ runId: string; status: string }> {
  const record = await run.services.runs.get(run.runId);
  // Remember the turn before the run reads as ended, so the session's next run sees it.
  if (record) await rememberTurn(run.services, record);
  await endRun(run.services, run.runId, "succeeded");
  return { runId: run.runId, status: "succeeded" };
}

/** "Record failure": whatever failed, the run ends failed with a readable reason. */
export async function recordFailure(
  run: RunScope,
  error: { Error: string; Cause?: string },
): Promise<{ runId: string; status: string; error: string; cause: string }> {
  const failure = { code: error.Error || "error", message: describeCause(error) };
  await endRun(run.services, run.runId, "failed", { error: failure });
  // "Run failed" reports these as the execution's error and cause.
  return { runId: run.runId, status: "failed", error: failure.code, cause: failure.message };
}

/** "Record timeout": nobody answered in time; the run ends timed_out and its open interrupts with it. */
export async function recordTimeout(run: RunScope): Promise<{ runId: string; status: string }> {
  const pending = (await run.services.interrupts.list(run.runId)).filter((i) => i.status === "pending");
  const message = pending.length
    ? `No decision arrived in time for: ${pending.map((i) => i.summary.split("\n")[0]).join("; ")}`
    : "A step of the run took longer than its time limit.";
  await endRun(run.services, run.runId, "timed_out", { error: { code: "timed_out", message } });
  return { runId: run.runId, status: "timed_out" };
}

/**
 * Step Functions reported that the execution ended. Normally the run has ended already; if the
 * execution crashed, was aborted or timed out without reaching our states, the run ends here.
 */
export async function reconcileExecutionEnd(
  services: RunScope["services"],
  runId: string,
  execution: { status: string; error?: string | null; cause?: string | null },
): Promise<void> {
  const status: TerminalStatus | undefined = ({ SUCCEEDED: "succeeded", FAILED: "failed", TIMED_OUT: "timed_out", ABORTED: "cancelled" } as const)[
    execution.status as "SUCCEEDED"
  ];
  if (!status) return;
  const message = execution.cause || execution.error || `The execution ended ${execution.status.toLowerCase()}.`;
  await endRun(services, runId, status, status === "succeeded" ? {} : { error: { code: execution.error || status, message } });
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

/** A "Wait for …" task's Lambda: keep the task token with the interrupt; resume at once if decided already. */
export async function awaitInterrupt(run: RunScope, input: { interruptId: string; taskToken: string }): Promise<void> {
  const { services } = run;
  const interrupt = await services.interrupts.attachToken(run.runId, input.interruptId, input.taskToken);
  if (interrupt.status !== "pending") await resumeCallback(services, input.taskToken, input.interruptId);
}
