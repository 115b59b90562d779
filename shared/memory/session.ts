import type { RunRecord } from "../contracts/run.js";
import type { ChatMessage } from "../llm/types.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import { cutToBytes, utf8Bytes } from "../text/bytes.js";

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

/**
 * UTF-8 bytes a session turn's request and answer hold at most: a turn is one DynamoDB item (400 KB
 * at most, with its keys and attributes' names), budgeted at about 350 KB as the others are.
 */
export const MAX_TURN_BYTES = 300_000;

/**
 * The answer a turn keeps: whole when it fits beside the request, else its beginning and a note
 * (the run's record and files keep the whole). An interrupted run's finished work can be any size.
 */
export function turnAnswer(input: string, answer: string): string {
  const room = MAX_TURN_BYTES - utf8Bytes(input);
  if (utf8Bytes(answer) <= room) return answer;
  const note = `\n\n[cut at ${room} of ${utf8Bytes(answer)} bytes to fit the session's memory; the run keeps the whole answer]`;
  return `${cutToBytes(answer, Math.max(0, room - utf8Bytes(note)))}${note}`;
}

/** The run's turn in its session: its request and what it answered (both, or nothing). */
export async function writeTurn(ports: Pick<Ports, "sessions">, run: RunRecord, answer: string): Promise<void> {
  if (run.replayOf) return; // a replay is a check of the code, not a turn of the conversation
  await ports.sessions.appendTurn(run.tenantId, run.sessionId, run.runId, run.turn ?? 0, [
    { role: "user", content: run.input },
    { role: "assistant", content: turnAnswer(run.input, answer) },
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
