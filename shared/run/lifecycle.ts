import { countMetric } from "../observability.js";
import type { RunState } from "../contracts/steps.js";
import type { EventBody } from "../contracts/events.js";
import { TERMINAL_STATUSES, type RunRecord } from "../contracts/run.js";
import { NotFoundError } from "../errors.js";
import { chooseMode, fixedMode } from "../agent/router.js";
import type { RunScope } from "../agent/loop.js";
import { resumeCallback } from "../agent/interrupts.js";
import { rememberTurn, sessionHistory } from "../memory/session.js";

/** "Start run": mark the run running and decide its mode (or leave it to "Route request"). */
export async function startRun(run: RunScope): Promise<RunState> {
  const { services } = run;
  // Only the first delivery moves queued → running and announces it (steps run at least once).
  const started = await services.runs.startIfQueued(run.runId);
  const record = started ?? (await services.runs.get(run.runId));
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const mode = record.mode ?? fixedMode(record);
  if (started) {
    countMetric("RunsStarted");
    await Promise.all([
      mode ? services.runs.update(run.runId, { mode }) : undefined,
      // The run's first event.
      services.events.append(run.runId, [{ type: "run.started", data: { mode: mode ?? "auto", input: record.input.slice(0, 2_000) } }], { after: 0 }),
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
  await Promise.all([
    services.runs.update(run.runId, { mode: decision.mode, ...(decision.mode === "answer" ? { result: decision.answer, files: [] } : {}) }),
    // Answered here: the turn joins the session now ("Finalize" only ends the run).
    decision.mode === "answer" ? rememberTurn(services, { ...record, result: decision.answer }) : undefined,
  ]);
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
  const terminalEvent = (record: RunRecord): EventBody =>
    status === "succeeded"
      ? { type: "run.succeeded", data: { result: details.result ?? record.result ?? "", files: details.files ?? record.files ?? [] } }
      : status === "failed"
        ? { type: "run.failed", data: { error: details.error ?? { code: "failed", message: "The run failed." } } }
        : { type: status === "timed_out" ? "run.timed_out" : "run.cancelled", data: { reason: details.error?.message ?? status } };
  // One conditional write moves the run to its terminal status and claims the slot's release.
  const patch = { status, endedAt: new Date().toISOString(), ...(details.error ? { error: details.error } : {}) };
  const ended = await services.runs.end(runId, patch, ["queued", "running", "awaiting_input"]);
  if (!ended) {
    // Ended before; if that step died before writing the terminal event, write it now (the slot
    // was claimed for release by the write that ended the run, and is not given back twice).
    const record = await services.runs.get(runId);
    if (!record) throw new NotFoundError(`run ${runId} not found`);
    if (record.status === status && !(await services.events.tip(runId)).closed) {
      await services.events.append(runId, [terminalEvent(record)], { close: true });
    }
    return false;
  }
  countMetric(RUN_ENDED_METRIC[status]);
  // All at once: the slot (a client that sees the run ended may submit the next one at once), the
  // terminal event (which closes the log) and the run's open interrupts.
  await Promise.all([
    services.activeRuns.release(ended.tenantId),
    services.events.append(runId, [terminalEvent(ended)], { close: true }),
    services.interrupts.list(runId).then((all) =>
      Promise.all(all.filter((i) => i.status === "pending").map((i) => services.interrupts.transition(runId, i.interruptId, status === "timed_out" ? "timed_out" : "cancelled"))),
    ),
  ]);
  return true;
}

/** "Finalize": the run succeeded with the answer stored by the summarizer or the ReAct agent. */
export async function finalizeRun(run: RunScope): Promise<{ runId: string; status: string }> {
  // The step that wrote the answer (summarizer, agent turn, router) also added it to the session.
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
  const message = execution.error ? describeCause({ Error: execution.error, Cause: execution.cause ?? undefined }) : `The execution ended ${execution.status.toLowerCase()}.`;
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
