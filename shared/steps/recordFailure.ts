import type { RecordFailureInput } from "../contracts/steps.js";
import { StepErrorCode } from "../errors.js";
import { blockOf } from "../guardrails/textGuard.js";
import type { StepPorts } from "../ports/index.js";
import { describeCause, type EndRunPorts, endRun } from "../run/lifecycle.js";
import { handOverAtEnd } from "../run/sessionQueue.js";

/** Lambda's `errorMessage` in a Cause (`{"errorType","errorMessage",...}`). */
function errorMessageOf(cause: string | undefined): string | undefined {
  try {
    return (JSON.parse(cause ?? "") as { errorMessage?: string }).errorMessage;
  } catch {
    return undefined;
  }
}

export type RecordFailurePorts = StepPorts<keyof EndRunPorts | "sessions">;

/** "Record failure": whatever failed, the run ends failed with a readable reason. */
export async function recordFailure(
  input: RecordFailureInput,
  ports: RecordFailurePorts,
): Promise<{ runId: string; status: string; error: string; cause: string }> {
  const failure = { code: input.error.Error || "error", message: describeCause(input.error) };
  await handOverAtEnd(ports, input.runId);
  if (input.error.Error === StepErrorCode.GuardrailBlocked) {
    // A guardrail blocked an answer: the run ends blocked, with the check and its reason.
    const { check, reason } = blockOf(errorMessageOf(input.error.Cause) ?? failure.message);
    await endRun(ports, input.runId, "blocked", { error: { code: check, message: reason } });
    return { runId: input.runId, status: "blocked", error: check, cause: reason };
  }
  await endRun(ports, input.runId, "failed", { error: failure });
  // "Run failed" reports these as the execution's error and cause.
  return { runId: input.runId, status: "failed", error: failure.code, cause: failure.message };
}
