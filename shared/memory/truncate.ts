import type { ChatMessage } from "../llm/types.js";
import type { TokenCounter } from "./tokens.js";

/**
 * The conversation that fits in `budgetTokens` (JD Genie's truncateMessage, done right):
 *
 * - the leading system/developer messages are always kept;
 * - the current turn, the last user message and everything after it, is always kept as is;
 * - the history between them is cut into units: a message, or an assistant message with tool calls
 *   together with the tool results answering them. The newest units that fit are kept, so the
 *   oldest are dropped first, and never part of a unit;
 * - the kept history starts with a user message (an assistant or tool reply without its question
 *   is dropped); tool results without their call, and calls missing a result, never appear (the API
 *   rejects both).
 *
 * When the system messages and the current turn alone exceed the budget they are returned anyway:
 * dropping the question being answered is never right. Callers that must stay under a hard limit
 * compare `counter.countMessages(result)` with it. Without any user message nothing can be cut
 * safely and the messages are returned unchanged.
 *
 * Pure and deterministic; the kept messages are the input objects, in their input order.
 */
export function fitToBudget(messages: ChatMessage[], budgetTokens: number, counter: TokenCounter): ChatMessage[] {
  const systemEnd = leadingSystemCount(messages);
  const currentStart = messages.findLastIndex((message) => message.role === "user");
  if (currentStart < systemEnd) return [...messages];

  const system = messages.slice(0, systemEnd);
  const current = messages.slice(currentStart);
  const units = historyUnits(messages.slice(systemEnd, currentStart));

  // A prompt whose bytes fit the budget fits (a token is at least one byte): the common case needs
  // no tokenizing, which costs milliseconds for a long prompt.
  const fitsUncounted = counter.atMost(messages) <= budgetTokens;
  // countMessages is additive: a unit costs its messages without the prompt's fixed reply priming.
  const priming = counter.countMessages([]);
  let remaining = fitsUncounted ? Number.POSITIVE_INFINITY : budgetTokens - counter.countMessages([...system, ...current]);
  let keepFrom = fitsUncounted ? 0 : units.length;
  while (keepFrom > 0) {
    const cost = counter.countMessages(units[keepFrom - 1]) - priming;
    if (cost > remaining) break;
    remaining -= cost;
    keepFrom--;
  }
  while (keepFrom < units.length && units[keepFrom][0].role !== "user") keepFrom++;

  return [...system, ...units.slice(keepFrom).flat(), ...current];
}

function leadingSystemCount(messages: ChatMessage[]): number {
  let count = 0;
  while (count < messages.length && (messages[count].role === "system" || messages[count].role === "developer")) count++;
  return count;
}

/** The history in droppable units; orphan tool results and unanswered tool calls are left out. */
function historyUnits(history: ChatMessage[]): ChatMessage[][] {
  const units: ChatMessage[][] = [];
  let i = 0;
  while (i < history.length) {
    const message = history[i];
    i++;
    if (message.role === "tool") continue; // an orphan: no call right before it asked for it
    if (message.role !== "assistant" || !message.tool_calls?.length) {
      units.push([message]);
      continue;
    }
    // The results of a call follow it directly (the API requires that), in any order.
    const unanswered = new Set(message.tool_calls.map((call) => call.id));
    const unit: ChatMessage[] = [message];
    for (; i < history.length; i++) {
      const result = history[i];
      if (result.role !== "tool") break;
      if (unanswered.delete(result.tool_call_id)) unit.push(result);
    }
    if (unanswered.size === 0) units.push(unit);
  }
  return units;
}
