import type { EventBody } from "../contracts/events.js";
import type { Ports } from "../ports/index.js";
import { checksAt, checkText, decisionEvents } from "./checks.js";

/** What checking a run's input touches: the run, its events, the model (moderation, judge). */
export type InputGuardPorts = Pick<Ports, "runs" | "events" | "model">;

/** The input was blocked: the run must end `blocked` with this check and reason, before any model call. */
export interface InputBlocked {
  check: string;
  reason: string;
}

/**
 * The run's input checks, before it starts (every door's run passes here, once its turn comes):
 * each decision is an event; a redacted input replaces the run's input, so no agent reads what was
 * taken out; a judge's tokens count in the run's usage. Returns the block, if a check blocked it.
 * A `block` check whose service cannot answer throws (retried by the state machine, then the run fails).
 */
export async function guardRunInput(ports: InputGuardPorts, runId: string): Promise<InputBlocked | undefined> {
  const record = await ports.runs.get(runId);
  const checks = checksAt(record?.guardrails, "input");
  // Only before the start: a repeated delivery of a started run was checked already.
  if (record?.status !== "queued" || checks.length === 0) return undefined;
  const checked = await checkText(checks, "input", record.input, { model: ports.model });
  if (checked.usage.llmCalls) await ports.runs.addUsage(runId, checked.usage);
  if (!checked.blocked && checked.text !== record.input) await ports.runs.update(runId, { input: checked.text }, ["queued"]);
  await ports.events.append(runId, decisionEvents(checked.decisions) as EventBody[]);
  if (!checked.blocked) return undefined;
  return { check: checked.blocked.check, reason: `${checked.blocked.check} blocked the input: ${checked.blocked.reason}` };
}
