import type { ChatMessage } from "../llm/types.js";
import type { TokenCounter } from "./tokens.js";

/** Compaction frees room down to this share of the budget: seldom and in blocks, so most requests keep the previous prefix (provider caches). */
export const COMPACT_TO_SHARE = 0.3;
/** Tool outputs shorter than this are kept: their note would save little. */
const MIN_COMPACTED_CHARS = 600;
/** Where a compacted output's note starts (and how a compacted output is recognised). */
export const COMPACTED_PREFIX = "[Compacted to fit the context window:";

/** How the model can read a compacted output again: a tool call to make, or undefined when only its start is kept. */
export type RereadHint = (call: { name: string; arguments: string }, output: string) => string | undefined;

/**
 * Keeps an agent's own turn within its prompt budget. When the prompt (`fixedTokens` for the system
 * prompt, history and tool definitions, plus the turn's messages) outgrows `budgetTokens`, the
 * outputs of the turn's oldest tool rounds are replaced by a short note saying what they were and
 * how to read them again, oldest round first, until the prompt is down to COMPACT_TO_SHARE of the
 * budget: one block at a time, so that the requests between two compactions share their prefix
 * (provider prompt caches). The newest round is never compacted (the model has not seen it yet),
 * and an assistant tool call always keeps its tool messages (only their content changes).
 *
 * Mutates `messages` (the turn's messages stay compacted in every later request, which keeps the
 * prefix stable) and returns the number of outputs compacted.
 */
export function compactTurn(
  messages: ChatMessage[],
  turnStart: number,
  options: { fixedTokens: number; budgetTokens: number; counter: TokenCounter; reread: RereadHint; force?: boolean },
): number {
  const { counter, budgetTokens, fixedTokens } = options;
  const turn = () => messages.slice(turnStart);
  if (!options.force && fixedTokens + counter.atMost(turn()) <= budgetTokens) return 0;
  let size = fixedTokens + counter.countMessages(turn());
  if (!options.force && size <= budgetTokens) return 0;
  const target = Math.floor(budgetTokens * COMPACT_TO_SHARE);
  const rounds = toolRounds(messages, turnStart);
  let compacted = 0;
  for (const round of rounds.slice(0, -1)) {
    if (size <= target) break;
    const calls = new Map(round.calls.map((c) => [c.id, c]));
    for (const index of round.results) {
      const result = messages[index] as Extract<ChatMessage, { role: "tool" }>;
      const output = typeof result.content === "string" ? result.content : "";
      if (output.length < MIN_COMPACTED_CHARS || output.startsWith(COMPACTED_PREFIX)) continue;
      const call = calls.get(result.tool_call_id);
      const note = noteFor(call ?? { name: "a tool", arguments: "{}" }, output, options.reread);
      size -= counter.count(output) - counter.count(note);
      messages[index] = { ...result, content: note };
      compacted++;
    }
  }
  return compacted;
}

/** The turn's tool rounds: each assistant tool call and the indexes of the tool messages answering it. */
function toolRounds(messages: ChatMessage[], from: number) {
  const rounds: { calls: { id: string; name: string; arguments: string }[]; results: number[] }[] = [];
  for (let i = from; i < messages.length; i++) {
    const message = messages[i];
    if (message.role === "assistant" && message.tool_calls?.length) {
      rounds.push({
        calls: message.tool_calls.map((c) =>
          c.type === "function" ? { id: c.id, ...c.function } : { id: c.id, name: c.custom.name, arguments: c.custom.input },
        ),
        results: [],
      });
    } else if (message.role === "tool") rounds.at(-1)?.results.push(i);
  }
  return rounds;
}

function noteFor(call: { name: string; arguments: string }, output: string, reread: RereadHint): string {
  const hint = reread(call, output);
  const start = output.slice(0, 200).replace(/\s+/g, " ").trim();
  return (
    `${COMPACTED_PREFIX} the output of ${call.name} (${output.length} characters) was taken out of this conversation. ` +
    `It began: "${start}…". ` +
    (hint ? `To read it again: ${hint}.]` : "Only this start is kept; what you concluded from it is in your later messages.]")
  );
}
