import { fixedMode } from "../agent/router.js";
import { START_EVENTS } from "../contracts/historyBudget.js";
import type { PlanOutput, RunState, StartRunInput } from "../contracts/steps.js";
import { NotFoundError } from "../errors.js";
import { guardRunInput, type InputGuardPorts } from "../guardrails/inputGuard.js";
import { countMetric } from "../observability.js";
import type { StepPorts } from "../ports/index.js";
import { type EndRunPorts, endRun } from "../run/lifecycle.js";

export type StartRunPorts = StepPorts<keyof EndRunPorts | keyof InputGuardPorts>;

/**
 * "Start run": mark the run running and decide its mode (or leave it to "Route request"). In a run's
 * next execution (its history budget was spent), hand on where it goes on: "Choose mode" sends the
 * plan's next tasks to "Execute tasks", and a ReAct run to its next "Agent turn". Either way the
 * execution's history estimate starts here.
 */
export async function startRun(input: StartRunInput, ports: StartRunPorts): Promise<RunState | PlanOutput> {
  const { runId } = input;
  if (input.continued) {
    if (!(await ports.runs.get(runId))) throw new NotFoundError(`run ${runId} not found`);
    return { ...input.continued, runId, history: START_EVENTS };
  }
  // The input's guardrails, before anything runs: a blocked run ends here, having cost no model call.
  const blocked = await guardRunInput(ports, runId);
  if (blocked) {
    await endRun(ports, runId, "blocked", { error: { code: blocked.check, message: blocked.reason } });
    return { runId, mode: "ended", history: START_EVENTS };
  }
  // Only the first delivery moves queued → running and announces it (steps run at least once).
  const started = await ports.runs.startIfQueued(runId);
  const record = started ?? (await ports.runs.get(runId));
  if (!record) throw new NotFoundError(`run ${runId} not found`);
  const mode = record.mode ?? fixedMode(record);
  if (started) {
    countMetric("RunsStarted");
    await Promise.all([
      mode ? ports.runs.update(runId, { mode }) : undefined,
      // The run's first event.
      ports.events.append(runId, [{ type: "run.started", data: { mode: mode ?? "auto", input: record.input.slice(0, 2_000) } }]),
    ]);
  }
  return { runId, mode: mode ?? "route", history: START_EVENTS };
}
