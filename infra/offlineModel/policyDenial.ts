// A call a tool policy denied (shared/agent/toolPolicy.ts answers it "Denied by policy: <reason>"):
// the agent adapts as a person would, by sending the call again with its longest text shortened to
// fit the limit the reason names (or to half, when it names none). Twice denied, it gives up.

import { textOf } from "./conversation.js";
import { type ChatMessage, callTools, type Decision } from "./types.js";

const DENIED = "Denied by policy:";
/** How often the agent shortens one call before it reports the denial instead. */
const MAX_ADAPTATIONS = 2;

export function policyDenialMove(messages: readonly ChatMessage[]): Decision | undefined {
  const last = messages.findLastIndex((message) => message.role === "assistant" && message.tool_calls?.length);
  if (last < 0 || messages.slice(last + 1).some((message) => message.role !== "tool")) return undefined;
  const denials = messages.slice(last + 1).filter((message) => textOf(message.content).startsWith(DENIED));
  if (denials.length === 0 || deniedRounds(messages) > MAX_ADAPTATIONS) return undefined;
  const calls = denials.flatMap((denial) => {
    const call = messages[last].tool_calls?.find((c) => c.id === denial.tool_call_id)?.function;
    const args = call && parseObject(call.arguments);
    const smaller = args && shortened(args, limitIn(textOf(denial.content)));
    return call && smaller ? [{ name: call.name, arguments: smaller }] : [];
  });
  return calls.length > 0 ? callTools(calls) : undefined;
}

/** How many rounds in a row, up to the last, had a call denied by a policy. */
function deniedRounds(messages: readonly ChatMessage[]): number {
  let rounds = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message.role === "user") break;
    if (message.role === "assistant" && message.tool_calls?.length) {
      const results = messages.slice(i + 1).filter((m) => m.role === "tool" && message.tool_calls?.some((c) => c.id === m.tool_call_id));
      if (!results.some((m) => textOf(m.content).startsWith(DENIED))) break;
      rounds++;
    }
  }
  return rounds;
}

/** The size limit a reason names ("at most 1,000 characters"): its first number of two digits or more. */
function limitIn(reason: string): number | undefined {
  const number = reason.match(/\b\d{1,3}(?:,\d{3})+\b|\b\d{2,}\b/)?.[0];
  return number ? Number(number.replaceAll(",", "")) : undefined;
}

/** The arguments with their longest text cut to the limit (or to half), marked as shortened; undefined when there is none. */
function shortened(args: Record<string, unknown>, limit: number | undefined): Record<string, unknown> | undefined {
  const [name, text] = Object.entries(args)
    .filter((entry): entry is [string, string] => typeof entry[1] === "string")
    .sort((a, b) => b[1].length - a[1].length)[0] ?? [undefined, ""];
  if (!name || text.length < 2) return undefined;
  const mark = "\n(shortened to fit a policy)\n";
  const room = Math.min(limit ?? Math.floor(text.length / 2), Math.floor(text.length / 2)) - mark.length;
  if (room <= 0) return undefined;
  return { ...args, [name]: `${[...text].slice(0, room).join("")}${mark}` };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
