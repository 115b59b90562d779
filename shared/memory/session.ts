import type { RunRecord } from "../contracts/run.js";
import type { ChatMessage } from "../llm/types.js";
import type { Ports, SettingsOf } from "../ports/index.js";

/** The session's earlier turns, as chat messages (multi-turn memory across runs; Genie has none). */
export async function sessionHistory(ports: Pick<Ports, "sessions">, run: RunRecord): Promise<ChatMessage[]> {
  // A session the run's submit created has no earlier turns: nothing to read.
  if (run.newSession) return [];
  const messages = await ports.sessions.messages(run.tenantId, run.sessionId);
  return earlierTurns(messages, run).map((m) => ({ role: m.role, content: m.content }));
}

/**
 * The session's messages before this run's turn. A replay or a fork sees the session as the run it
 * came from saw it: the turns before that run's.
 */
export function earlierTurns<M extends { runId: string }>(messages: readonly M[], run: RunRecord): M[] {
  const parent = run.replayOf ?? run.forkOf?.runId;
  const parentTurn = parent ? messages.findIndex((m) => m.runId === parent) : -1;
  const before = parentTurn >= 0 ? messages.slice(0, parentTurn) : messages;
  return before.filter((m) => m.runId !== run.runId);
}

/** The run's turn in its session: its request and what it answered (both, or nothing). */
export async function writeTurn(ports: Pick<Ports, "sessions">, run: RunRecord, answer: string): Promise<void> {
  if (run.replayOf) return; // a replay is a check of the code, not a turn of the conversation
  await ports.sessions.appendTurn(run.tenantId, run.sessionId, run.runId, run.turn ?? 0, [
    { role: "user", content: run.input },
    { role: "assistant", content: answer },
  ]);
}

/**
 * After a run has its answer, its question and answer join the session for the next run (before
 * the run reads as ended, so a client that submits the next turn at once sees it).
 */
export async function rememberTurn(ports: Pick<Ports, "sessions">, run: RunRecord): Promise<void> {
  if (run.result) await writeTurn(ports, run, run.result);
}

/** Budgets of a run: its own, else the service defaults. */
export function budgetsOf(ports: SettingsOf<"budgets">, run: RunRecord) {
  return {
    maxPlanIterations: run.budgets?.maxPlanIterations ?? ports.settings.budgets.maxPlanIterations,
    maxRounds: run.budgets?.maxRounds ?? ports.settings.budgets.maxAgentRounds,
  };
}
