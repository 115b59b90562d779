import type { StepPorts } from "../ports/index.js";
import { type EndRunPorts, endRun } from "../run/lifecycle.js";
import { handOverAtEnd } from "../run/sessionQueue.js";

export type FinalizePorts = StepPorts<keyof EndRunPorts | "sessions">;

/** "Finalize": the run succeeded with the answer stored by the summarizer, the ReAct agent or the router. */
export async function finalize(input: { runId: string }, ports: FinalizePorts): Promise<{ runId: string; status: string }> {
  // The step that wrote the answer also added it to the session.
  await handOverAtEnd(ports, input.runId);
  await endRun(ports, input.runId, "succeeded");
  return { runId: input.runId, status: "succeeded" };
}
