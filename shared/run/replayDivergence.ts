import { StepError, StepErrorCode } from "../errors.js";
import type { JournalKind, RunJournal } from "../ports/journal.js";

/**
 * Where a replay parted from the journal it replays: the call (agent scope, round, kind, a tool's
 * call id), why (the model was asked something else, or the call is not in the journal at all) and
 * both sides: what the journal recorded and what the code under replay asked for.
 */
export interface Divergence {
  scope: string;
  round: number;
  kind: JournalKind;
  callId?: string;
  reason: "different_request" | "not_recorded";
  /** The recorded call: its request's fingerprint and what it returned. */
  recorded?: { fingerprint?: string; value: unknown };
  /** The call the replay made: its fingerprint, and the first message that differs (model calls). */
  replayed: { fingerprint?: string; message?: { index: number; role: string; text: string }; tool?: { name: string; arguments: string } };
}

/** Where a replay keeps its divergences: memos of its own journal, beside the records it replayed. */
const DIVERGENCES = { scope: "replay", round: 0, kind: "memo" } as const;

/** Stops a replay: no later attempt changes it (the run's own journal is the problem), so the run fails at once. */
export class ReplayDivergedError extends StepError {
  constructor(readonly divergence: Divergence) {
    super(StepErrorCode.AgentFailed, `The replay diverged: ${describeDivergence(divergence)}`);
  }
}

export function describeDivergence(d: Divergence): string {
  const call = `${d.kind === "llm" ? "the model call" : `the ${d.kind} call${d.callId ? ` ${d.callId}` : ""}`} of ${d.scope}, round ${d.round}`;
  if (d.reason === "not_recorded") return `${call} is not in the journal.`;
  const message = d.replayed.message ? ` (message ${d.replayed.message.index}, ${d.replayed.message.role}, differs)` : "";
  return `${call} asked the model something else than the recorded run${message}.`;
}

/** Each divergence is kept, with when it was found: a task that diverged fails, and what follows from that diverges too. */
export async function recordDivergence(journal: Pick<RunJournal, "commit">, runId: string, divergence: Divergence): Promise<void> {
  const at = new Date().toISOString();
  const callId = `divergence#${at}#${divergence.scope}#${divergence.round}#${divergence.callId ?? ""}`;
  await journal.commit(runId, { records: [{ ...DIVERGENCES, callId, value: { ...divergence, at } }] });
}

/** The replay's first divergence, if it had one. */
export async function readDivergence(journal: Pick<RunJournal, "read">, runId: string): Promise<Divergence | undefined> {
  const found = (await journal.read(runId, DIVERGENCES.scope)).filter((r) => r.kind === "memo" && r.callId?.startsWith("divergence#"));
  found.sort((a, b) => String(a.callId).localeCompare(String(b.callId)));
  return found[0]?.value as Divergence | undefined;
}
