// Router role: picks ReAct for a single ask and Plan-and-Solve for several.

import { lastUserText, listedTools, requestIn } from "./conversation.js";
import { findExpressions } from "./expressions.js";
import { type ChatMessage, callTools, type Decision, say } from "./types.js";

export function route(messages: readonly ChatMessage[]): Decision {
  if (messages.at(-1)?.role === "tool") return say("Mode chosen.");
  const request = requestIn(lastUserText(messages));
  // A direct answer is plain text (it streams to the user); no tool is called.
  const direct = directAnswer(request, messages);
  if (direct) return say(direct);
  const severalThings = whySeveralThings(request);
  const args = severalThings
    ? { mode: "plan_solve", reason: `The request asks for several things: ${severalThings}.` }
    : { mode: "react", reason: "The request asks for one thing, so a single agent loop is enough." };
  return callTools([{ name: "choose_mode", arguments: args }]);
}

const GREETING = /^\s*(hi|hello|hey|good (morning|afternoon|evening)|thanks|thank you)\b/i;
/** Only a greeting or thanks ("Hello there!", "Thanks a lot."). */
const ONLY_GREETING = /^\s*(hi|hello|hey|good (morning|afternoon|evening)|thanks|thank you)( there| a lot| so much)?[\s!.,]*$/i;
/** Questions about the assistant itself ("who are you?", "what is Stepwise?", "what can you do?"). */
const ABOUT_ME =
  /\b(who|what) are you\b|\bwhat can you do\b|\bhow do you work\b|\b(what|who) is stepwise\b|\bwhat does stepwise do\b|\bhow does stepwise work\b|\babout stepwise\b|\bare you stepwise\b/i;

/** What Stepwise is, naming the tools its agents have (those the router's prompt lists). */
function aboutStepwise(tools: ReadonlySet<string>): string {
  const named = [...tools].slice(0, 12);
  const using = named.length ? ` with tools (${named.join(", ")}${tools.size > named.length ? ", …" : ""})` : "";
  return (
    `I am Stepwise, a team of AI agents. A planner splits your request into tasks, executor agents solve them in parallel${using}, ` +
    "and a summarizer writes the answer; risky steps wait for your approval."
  );
}

/**
 * Greetings, thanks and questions about Stepwise itself are answered at once; "what did I ask
 * before?" is answered from the session's earlier turns (the conversation the router is shown).
 */
function directAnswer(request: string, messages: readonly ChatMessage[]): string | undefined {
  const hello = GREETING.test(request) ? "Hello! " : "";
  if (ABOUT_ME.test(request)) return `${hello}${aboutStepwise(listedTools(messages))}`;
  if (ONLY_GREETING.test(request)) {
    return /^\s*thank/i.test(request)
      ? "You are welcome! Tell me what to work on next."
      : "Hello! Tell me what to work on: I can calculate, measure texts and write reports.";
  }
  if (/\bwhat did i (just )?ask\b|\bremind me\b/i.test(request)) {
    const earlier = messages
      .filter((m) => m.role === "user")
      .slice(0, -1)
      .map((m) => (typeof m.content === "string" ? m.content : ""));
    return earlier.length
      ? `Earlier in this session you asked: ${earlier.map((q) => `"${q}"`).join(", then ")}.`
      : "This is the first request of this session.";
  }
  return undefined;
}

/** Why the request counts as several asks, or undefined when it is a single one. */
function whySeveralThings(request: string): string | undefined {
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
