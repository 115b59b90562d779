// Executor / ReAct role: turns a task into tool calls, then reports the tool results.

import { wordsOf } from "../../shared/text/words.js";
import {
  assistantToolCalls,
  bulletLines,
  cut,
  isFailure,
  labelledText,
  lastRequestIndex,
  lastUserText,
  oneLine,
  requestIn,
  taskOf,
  textOf,
  toolResultsSinceLastUser,
} from "./conversation.js";
import { findToolDirectives } from "./directives.js";
import { findExpressions } from "./expressions.js";
import { imageMove, toolImagesSeen } from "./images.js";
import { EXPLAIN } from "./planner.js";
import { policyDenialMove } from "./policyDenial.js";
import { researchMove } from "./research.js";
import { type ChatMessage, callTools, type Decision, say, type ToolSpec } from "./types.js";
import { workMove } from "./workTools.js";

type Call = Decision["calls"][number];

/** The search tool of a catalogue larger than a request carries (shared/tools/toolSearch.ts). */
const FIND_TOOLS = "find_tools";

interface Assignment {
  task: string;
  /** True when no `Your task:` line was given: the agent is answering the user's request directly. */
  isReact: boolean;
  userText: string;
}

export function execute(messages: readonly ChatMessage[], offered: ReadonlySet<string>, tools?: readonly ToolSpec[]): Decision {
  const revised = labelledText(lastUserText(messages), "Your task:");
  if (revised?.startsWith(EXPLAIN.trim())) {
    return say(
      `This could not be done with my tools as planned (${cut(revised.slice(EXPLAIN.length), 200)}); the earlier attempt's error is in the results above.`,
    );
  }
  // A call a tool policy denied is sent again, smaller, before anything else is considered.
  const adapted = policyDenialMove(messages);
  if (adapted) return adapted;
  const userText = lastUserText(messages);
  const assignedTask = labelledText(userText, "Your task:");
  const assignment = { task: assignedTask ?? requestIn(userText), isReact: assignedTask === undefined, userText };
  // Tool calls named outright are the whole task: no work or research move of its own comes first.
  if (findToolDirectives(assignment.task).length === 0) {
    const work = imageMove(messages) ?? workMove(messages, offered, tools) ?? researchMove(messages, offered);
    if (work) return work;
  }
  const toolResults = toolResultsSinceLastUser(messages);
  if (toolResults.length > 0) {
    // The person answered the question asked first, or find_tools loaded the tools the task names:
    // now the rest of the task ("…, then compute 2+2").
    const made = assistantToolCalls(messages.slice(lastRequestIndex(messages)));
    const searched = made.some((call) => call.name === FIND_TOOLS);
    const rest = made.every((call) => call.name === "ask_user" || call.name === FIND_TOOLS)
      ? firstTurnCalls(assignment, offered, { answered: made.some((call) => call.name === "ask_user"), searched })
      : [];
    if (rest.length > 0) return callTools(rest);
    const results = searched ? resultsBeyondSearch(messages) : toolResults;
    // A model that sees images is shown those the tools returned: it says what each shows.
    return say([reportToolResults(results.length > 0 ? results : toolResults), ...toolImagesSeen(messages)].join("\n"));
  }
  const calls = firstTurnCalls(assignment, offered);
  return calls.length > 0 ? callTools(calls) : say(`I have no tool that fits this task: ${assignment.task}`);
}

function firstTurnCalls(assignment: Assignment, offered: ReadonlySet<string>, { answered = false, searched = false } = {}): Call[] {
  const { task, isReact } = assignment;
  // "use <tool> {…}" names the calls outright, for any tool offered (MCP tools included).
  // They are the whole task: once the person answered, a named question is not asked again.
  const directives = findToolDirectives(task);
  // A named tool not offered, in a catalogue larger than a request carries: searched for once, by its name.
  const missing = [...new Set(directives.filter((d) => !offered.has(d.name)).map((d) => d.name))];
  if (missing.length > 0 && !searched && offered.has(FIND_TOOLS)) {
    return [{ name: FIND_TOOLS, arguments: { query: missing.join(" "), limit: Math.min(missing.length, 20) } }];
  }
  const named = namedCalls(task, offered);
  if (named.length > 0) return named.filter((call) => !(answered && call.name === "ask_user"));
  // A request that says "ask me" gets a question first (the run waits for the answer).
  if (!answered && /\bask (me|the user)\b/i.test(task) && offered.has("ask_user")) {
    return [
      {
        name: "ask_user",
        arguments: { question: `You asked me to check with you first. What should I know before I do this: ${cut(task, 200)}` },
      },
    ];
  }
  if (/\breport/i.test(task) && offered.has("write_artifact")) return [writeReport(assignment)];
  const expressions = findExpressions(task);
  const calls: Call[] = offered.has("calculator")
    ? expressions.map((expression) => ({ name: "calculator", arguments: { expression } }))
    : [];
  const wantsTextStats = calls.length === 0 || (isReact && hasProse(task, expressions));
  if (wantsTextStats && offered.has("text_stats")) {
    calls.push({ name: "text_stats", arguments: { text: subjectText(assignment) } });
  }
  return calls;
}

/** The `use <tool> {…}` calls of a task, for the tools offered, exactly as written. */
function namedCalls(task: string, offered: ReadonlySet<string>): Call[] {
  return findToolDirectives(task).flatMap(({ name, arguments: args }) => (offered.has(name) ? [{ name, arguments: args }] : []));
}

function writeReport({ task, userText }: Assignment): Call {
  const filename = task.match(/[\w.-]+\.md\b/)?.[0] ?? "report.md";
  const results = bulletLines(userText);
  const body = results.length > 0 ? results.join("\n") : task;
  return {
    name: "write_artifact",
    arguments: { filename, content: `# Report\n\n${body}\n`, description: "Report of the results" },
  };
}

/** The text text_stats should measure: quoted text, else the request when the task points at it, else the task. */
function subjectText({ task, isReact, userText }: Assignment): string {
  if (isReact) return task;
  const quoted = task.match(/["“]([^"”]+)["”]/)?.[1];
  if (quoted) return quoted;
  if (/\brequest\b/i.test(task)) return labelledText(userText, "Request:") ?? task;
  return task;
}

/** Enough words beside the expressions to be worth measuring too. */
function hasProse(text: string, expressions: string[]): boolean {
  const prose = expressions.reduce((rest, expression) => rest.replace(expression, " "), text);
  return wordsOf(prose).filter((word) => /^\p{L}{2,}$/u.test(word.text)).length >= 4;
}

/** An agent whose rounds are spent is asked, without tools, what it did and what it did not (shared/agent/loop.ts). */
export const isBudgetDelivery = (messages: readonly ChatMessage[]) =>
  /^You have used all \d+ rounds of your budget/.test(lastUserText(messages));

/** The delivery at the round budget: every tool result the agent got, and the task it did not finish. */
export function deliverAtBudget(messages: readonly ChatMessage[]): Decision {
  const { task } = taskOf(
    messages.slice(
      0,
      messages.findLastIndex((m) => m.role === "user"),
    ),
  );
  const results = messages.filter((m) => m.role === "tool").map((m) => cut(oneLine(textOf(m.content)), 300));
  const done = results.length > 0 ? results.map((r) => `- ${r}`).join("\n") : "- nothing: no tool call finished";
  return say(
    `I ran out of rounds before I finished.\n\nWhat I did:\n${done}\n\nWhat is not done: the rest of the task (${cut(oneLine(task), 200)}).`,
  );
}

/** The tool results since the last user message, without find_tools' lists (how tools were found is no result). */
function resultsBeyondSearch(messages: readonly ChatMessage[]): string[] {
  const since = messages.slice(lastRequestIndex(messages) + 1);
  const searches = new Set(
    since.flatMap((m) => m.tool_calls ?? []).flatMap((call) => (call.function?.name === FIND_TOOLS && call.id ? [call.id] : [])),
  );
  return since.filter((m) => m.role === "tool" && !searches.has(m.tool_call_id ?? "")).map((m) => textOf(m.content));
}

function reportToolResults(results: string[]): string {
  const parts = results.map((result) => {
    // A failure's first line is the fact (e.g. the user's reason for a rejection); what follows is
    // an instruction to the model, not something to repeat in an answer.
    const text = cut((isFailure(result) ? result.trim().split("\n")[0] : result).trim(), 300);
    return isFailure(result) ? `The tool reported: ${text}` : text;
  });
  const failureNote = results.some(isFailure) ? " Not every tool call succeeded." : "";
  return `Done. ${parts.join("; ")}${failureNote}`.trim();
}
