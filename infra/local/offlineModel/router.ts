// Router role: picks ReAct for a single ask and Plan-and-Solve for several.

import { lastUserText, requestIn } from "./conversation.js";
import { findExpressions } from "./expressions.js";
import { callTools, say, type ChatMessage, type Decision } from "./types.js";

export function route(messages: readonly ChatMessage[]): Decision {
  if (messages.at(-1)?.role === "tool") return say("Mode chosen.");
  const request = requestIn(lastUserText(messages));
  const severalThings = whySeveralThings(request);
  const args = severalThings
    ? { mode: "plan_solve", reason: `The request asks for several things: ${severalThings}.` }
    : { mode: "react", reason: "The request asks for one thing, so a single agent loop is enough." };
  return callTools([{ name: "choose_mode", arguments: args }]);
}

/** Why the request counts as several asks, or undefined when it is a single one. */
export function whySeveralThings(request: string): string | undefined {
  if (/\sand\s/i.test(request)) return 'it joins asks with "and"';
  if (request.includes(";")) return "it separates asks with semicolons";
  if (/\bthen\b/i.test(request)) return 'it orders asks with "then"';
  if (countListItems(request) >= 2) return "it contains a list";
  if (findExpressions(request).length >= 2) return "it contains several calculations";
  return undefined;
}

function countListItems(text: string): number {
  return text.split(/\r?\n/).filter((line) => /^\s*(?:[-*•]|\d+[.)])\s+\S/.test(line)).length;
}
