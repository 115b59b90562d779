import type { StepPorts } from "../ports/index.js";
import { type EndRunPorts, endRun } from "../run/lifecycle.js";
import { handOverAtEnd } from "../run/sessionQueue.js";
import { type SessionTitlePorts, titleSession } from "./sessionTitle.js";

export type FinalizePorts = StepPorts<keyof EndRunPorts | keyof SessionTitlePorts>;

/** "Finalize": the run succeeded with the answer stored by the summarizer, the ReAct agent or the router. */
export async function finalize(input: { runId: string }, ports: FinalizePorts): Promise<{ runId: string; status: string }> {
  // The step that wrote the answer also added it to the session.
  await handOverAtEnd(ports, input.runId);
  // An agent that stopped at a token or cost budget delivered a summary: the run ends budget_exhausted.
  const status = (await ports.runs.get(input.runId))?.budget?.exhausted ? "budget_exhausted" : "succeeded";
  await endRun(ports, input.runId, status);
  // After the end, as newAgent does after its last event: nobody waits for the title, and it never fails the run.
  await titleSession(ports, input.runId);
  return { runId: input.runId, status };
}
