import { chooseMode, type RouterPorts } from "../agent/router.js";
import { portsForAgent } from "../agent/savedAgent.js";
import { ROUTE_EVENTS } from "../contracts/historyBudget.js";
import type { RunState } from "../contracts/steps.js";
import { NotFoundError } from "../errors.js";
import { rememberTurn, sessionHistory } from "../memory/session.js";
import type { StepPorts } from "../ports/index.js";
import { carrySessionFiles } from "../run/sessionFiles.js";

export type RouteRequestPorts = StepPorts<keyof RouterPorts | "sessions">;

/** "Route request": the router model picks react or plan_solve (or answers at once). */
export async function routeRequest(input: Pick<RunState, "runId" | "history">, ports: RouteRequestPorts): Promise<RunState> {
  const { runId } = input;
  const history = input.history === undefined ? undefined : input.history + ROUTE_EVENTS;
  const record = await ports.runs.get(runId);
  if (!record) throw new NotFoundError(`run ${runId} not found`);
  if (record.mode) return { runId, mode: record.mode, history };
  // The session's earlier files, before the router's prompt lists the run's files.
  await carrySessionFiles(ports, record);
  const decision = await chooseMode({ runId, ports: portsForAgent(ports, record.agent) }, record, await sessionHistory(ports, record));
  await Promise.all([
    ports.runs.update(runId, { mode: decision.mode, ...(decision.mode === "answer" ? { result: decision.answer, files: [] } : {}) }),
    // Answered here: the turn joins the session now ("Finalize" only ends the run).
    decision.mode === "answer" ? rememberTurn(ports, { ...record, result: decision.answer }) : undefined,
  ]);
  await ports.events.append(runId, [
    { type: "agent.thought", data: { agent: "router", text: `Mode: ${decision.mode}. ${decision.reason}`.trim() } },
  ]);
  return { runId, mode: decision.mode, history };
}
