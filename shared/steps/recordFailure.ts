import type { RecordFailureInput } from "../contracts/steps.js";
import type { StepPorts } from "../ports/index.js";
import { describeCause, type EndRunPorts, endRun } from "../run/lifecycle.js";
import { handOverAtEnd } from "../run/sessionQueue.js";

export type RecordFailurePorts = StepPorts<keyof EndRunPorts | "sessions">;

/** "Record failure": whatever failed, the run ends failed with a readable reason. */
export async function recordFailure(
  input: RecordFailureInput,
  ports: RecordFailurePorts,
): Promise<{ runId: string; status: string; error: string; cause: string }> {
  const failure = { code: input.error.Error || "error", message: describeCause(input.error) };
  await handOverAtEnd(ports, input.runId);
  await endRun(ports, input.runId, "failed", { error: failure });
  // "Run failed" reports these as the execution's error and cause.
  return { runId: input.runId, status: "failed", error: failure.code, cause: failure.message };
}
