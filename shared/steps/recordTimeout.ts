import type { StepPorts } from "../ports/index.js";
import { type EndRunPorts, endRun } from "../run/lifecycle.js";
import { handOverAtEnd } from "../run/sessionQueue.js";

export type RecordTimeoutPorts = StepPorts<keyof EndRunPorts | "sessions">;

/** "Record timeout": nobody answered in time; the run ends timed_out and its open interrupts with it. */
export async function recordTimeout(input: { runId: string }, ports: RecordTimeoutPorts): Promise<{ runId: string; status: string }> {
  const pending = (await ports.interrupts.list(input.runId)).filter((i) => i.status === "pending");
  const message = pending.length
    ? `No decision arrived in time for: ${pending.map((i) => i.summary.split("\n")[0]).join("; ")}`
    : "A step of the run took longer than its time limit.";
  await handOverAtEnd(ports, input.runId);
  await endRun(ports, input.runId, "timed_out", { error: { code: "timed_out", message } });
  return { runId: input.runId, status: "timed_out" };
}
