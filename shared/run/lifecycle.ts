import type { RunState } from "../contracts/steps.js";
import { NotFoundError } from "../errors.js";
import { chooseMode, fixedMode } from "../agent/router.js";
import type { RunScope } from "../agent/loop.js";
import { resumeCallback } from "../agent/interrupts.js";

/** "Start run": mark the run running and decide its mode (or leave it to "Route request"). */
export async function startRun(run: RunScope): Promise<RunState> {
  const { services } = run;
  const record = await services.runs.get(run.runId);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const mode = record.mode ?? fixedMode(record);
  // Only the first delivery moves queued → running and announces it (steps run at least once).
  if (await services.runs.update(run.runId, { status: "running", mode }, ["queued"])) {
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
  const { mode, reason } = record.mode ? { mode: record.mode, reason: "" } : await chooseMode(run, record.input);
  if (!record.mode) {
    await services.runs.update(run.runId, { mode });
    await services.events.append(run.runId, [
      { type: "agent.thought", data: { agent: "router", text: `Mode: ${mode}. ${reason}`.trim() } },
    ]);
  }
  return { runId: run.runId, mode };
}

/** "Finalize": the run succeeded with the answer stored by the summarizer or the ReAct agent. */
export async function finalizeRun(run: RunScope): Promise<{ runId: string; status: string }> {
  const { services } = run;
  const record = await services.runs.get(run.runId);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const now = new Date().toISOString();
  if (await services.runs.update(run.runId, { status: "succeeded", endedAt: now }, ["running", "awaiting_input"])) {
    await services.events.append(run.runId, [
      { type: "run.succeeded", data: { result: record.result ?? "", files: record.files ?? [] } },
    ]);
    return { runId: run.runId, status: "succeeded" };
  }
  return { runId: run.runId, status: record.status };
}

/** "Record failure": whatever failed, the run ends failed with a readable reason. */
export async function recordFailure(run: RunScope, error: { Error: string; Cause?: string }): Promise<{ runId: string; status: string }> {
  const { services } = run;
  const message = describeCause(error);
  const now = new Date().toISOString();
  const failure = { code: error.Error || "error", message };
  if (await services.runs.update(run.runId, { status: "failed", error: failure, endedAt: now }, ["queued", "running", "awaiting_input"])) {
    await services.events.append(run.runId, [{ type: "run.failed", data: { error: failure } }]);
  }
  return { runId: run.runId, status: "failed" };
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

/** "Record timeout": nobody answered in time; the run ends timed_out and its open interrupts with it. */
export async function recordTimeout(run: RunScope): Promise<{ runId: string; status: string }> {
  const { services } = run;
  const pending = (await services.interrupts.list(run.runId)).filter((i) => i.status === "pending");
  await Promise.all(pending.map((i) => services.interrupts.transition(run.runId, i.interruptId, "timed_out")));
  const reason = pending.length
    ? `No decision arrived in time for: ${pending.map((i) => i.summary.split("\n")[0]).join("; ")}`
    : "A step of the run took longer than its time limit.";
  const now = new Date().toISOString();
  if (await services.runs.update(run.runId, { status: "timed_out", error: { code: "timed_out", message: reason }, endedAt: now }, ["queued", "running", "awaiting_input"])) {
    await services.events.append(run.runId, [{ type: "run.timed_out", data: { reason } }]);
  }
  return { runId: run.runId, status: "timed_out" };
}

/** A "Wait for …" task's Lambda: keep the task token with the interrupt; resume at once if decided already. */
export async function awaitInterrupt(run: RunScope, input: { interruptId: string; taskToken: string }): Promise<void> {
  const { services } = run;
  const interrupt = await services.interrupts.attachToken(run.runId, input.interruptId, input.taskToken);
  if (interrupt.status !== "pending") await resumeCallback(services, input.taskToken, input.interruptId);
}
