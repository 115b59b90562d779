import type { Resolution, ToolFailure } from "../contracts/interrupts.js";
import type { ToolCall } from "../llm/types.js";
import type { Tool, ToolOutcome } from "../ports/tools.js";
import { interruptIdFor, openInterrupt } from "./interrupts.js";
import type { ScopeJournal } from "./scopeJournal.js";
import { pauseKindOf } from "./toolApproval.js";
import { parseArguments, type ToolRound } from "./toolExecution.js";

/**
 * Pause on a failing tool, whole. A call that failed for a reason a person can fix (the tool threw
 * a FixableToolError: an expired key, a permission, a quota, a server down), or a write call that
 * started and left no outcome (the step stopped mid-call), is not handed to the model as an error:
 * its task waits on a `tool_failure` interrupt, and the person's decision (retry, edit the
 * arguments, skip with a message, fail the task) applies to that call alone. The round's model
 * reply and its other calls' results are replayed from the journal, so nothing else runs again.
 *
 * The journal keeps every attempt: an `intent` per started attempt of a write call (the call id
 * for the first, `<call id>#<n>` after), and an `attempt` record (`<call id>#<n>`) per attempt
 * that failed or left no outcome; the call's `tool` record is its one successful outcome.
 */

/** What the model reads, and a person sees, for a write call whose outcome is unknown. */
export const IN_DOUBT_ERROR =
  "The call started, but the step stopped before its outcome was recorded: it may or may not have taken effect.";

/** The intent of a call's `attempt`-th start: the first keeps the call id, as before attempts were counted. */
export const intentKeyOf = (callId: string, attempt: number) => (attempt === 1 ? callId : `${callId}#${attempt}`);

const attemptKeyOf = (callId: string, attempt: number) => `${callId}#${attempt}`;

/** The call's attempts that failed or left no outcome, in order. */
export function failedAttempts(journal: ScopeJournal, round: number, callId: string): ToolFailure[] {
  const attempts: ToolFailure[] = [];
  for (let n = 1; ; n++) {
    const failed = journal.get(round, "attempt", attemptKeyOf(callId, n)) as ToolFailure | undefined;
    if (!failed) return attempts;
    attempts.push(failed);
  }
}

/** The number the call's next attempt has. */
export const nextAttemptOf = (journal: ScopeJournal, round: number, callId: string) => failedAttempts(journal, round, callId).length + 1;

/** A write call's last start left no outcome, and running it again might repeat its effect (the tool is not idempotent). */
function startedWithoutOutcome(journal: ScopeJournal, round: number, call: ToolCall, tool: Tool | undefined): boolean {
  if (tool?.access !== "write" || tool.idempotent) return false;
  return journal.has(round, "intent", intentKeyOf(call.id, nextAttemptOf(journal, round, call.id)));
}

/**
 * Whether a call of the round may need a person before it runs: an approval, a question, an earlier
 * failed attempt, or a start with no outcome. When none does, the round's intents are written with
 * its model reply in one write.
 */
export function mayWaitForPerson(round: ToolRound, call: ToolCall): boolean {
  const { journal } = round;
  if (journal.has(round.round, "tool", call.id)) return false;
  const tool = round.tools.get(call.name);
  return (
    pauseKindOf(tool, round.approval) !== undefined ||
    journal.has(round.round, "attempt", attemptKeyOf(call.id, 1)) ||
    startedWithoutOutcome(journal, round.round, call, tool)
  );
}

/**
 * The decisions on the round's calls that failed before: for each call with no result whose last
 * attempt failed (or started and left no outcome: recorded now as an attempt in doubt), the
 * person's decision; the first one not yet decided stops the round, its interrupt opened if it was not.
 */
export async function failureDecisionsOn(
  round: ToolRound,
  calls: ToolCall[],
): Promise<{ waitingFor?: string; decisions: Map<string, Resolution> }> {
  const { journal } = round;
  const decisions = new Map<string, Resolution>();
  for (const call of calls) {
    if (journal.has(round.round, "tool", call.id)) continue;
    if (startedWithoutOutcome(journal, round.round, call, round.tools.get(call.name))) {
      const attempt = nextAttemptOf(journal, round.round, call.id);
      recordFailedAttempt(journal, round.round, call, { attempt, error: IN_DOUBT_ERROR, reason: "in_doubt" });
      await journal.flush(); // the attempt is known to be in doubt before a person is asked about it
    }
    const last = failedAttempts(journal, round.round, call.id).at(-1);
    if (!last) continue;
    const interrupt = await pauseOn(round, call, last);
    if (interrupt.status === "pending") return { waitingFor: interrupt.interruptId, decisions };
    decisions.set(call.id, interrupt.resolution ?? { decision: "fail", message: `the request ${interrupt.status}`, resolvedAt: "" });
  }
  return { decisions };
}

/** Journals an attempt that failed for a fixable reason (or left no outcome), written with the next flush. */
export function recordFailedAttempt(journal: ScopeJournal, round: number, call: ToolCall, failure: ToolFailure): void {
  journal.record(round, "attempt", attemptKeyOf(call.id, failure.attempt), failure);
}

/** What a fixable outcome becomes in the journal: the attempt, the tool's error and why. */
export function failureOf(outcome: ToolOutcome, attempt: number): ToolFailure | undefined {
  if (!outcome.fixable) return undefined;
  return {
    attempt,
    error: outcome.output,
    reason: outcome.fixable.reason,
    ...(outcome.fixable.status !== undefined ? { status: outcome.fixable.status } : {}),
  };
}

/** The interrupt a failed attempt waits on (deterministic: a retried step finds the one it opened). */
export async function pauseOn(round: ToolRound, call: ToolCall, failure: ToolFailure) {
  const { ports, runId } = round;
  const interruptId = interruptIdFor(runId, round.scope, round.round, call.id, "failure", failure.attempt);
  return (
    (await ports.interrupts.get(runId, interruptId)) ??
    openInterrupt(ports, {
      interruptId,
      runId,
      kind: "tool_failure",
      taskId: round.taskId,
      toolName: call.name,
      callId: call.id,
      arguments: parseArguments(call.arguments),
      summary:
        failure.reason === "in_doubt"
          ? `${call.name} may or may not have run: ${IN_DOUBT_ERROR}`
          : `${call.name} failed (attempt ${failure.attempt}): ${failure.error.slice(0, 300)}`,
      failure,
    })
  );
}
