// Executor / ReAct role: turns a task into tool calls, then reports the tool results.

import { wordsOf } from "../../shared/text/words.js";
import {
  assistantToolCalls,
  bulletLines,
  cut,
  isFailure,
  labelledText,
  lastUserText,
  requestIn,
  toolResultsSinceLastUser,
} from "./conversation.js";
import { findToolDirectives } from "./directives.js";
import { findExpressions } from "./expressions.js";
import { imageMove } from "./images.js";
import { EXPLAIN } from "./planner.js";
import { researchMove } from "./research.js";
import { type ChatMessage, callTools, type Decision, say } from "./types.js";
import { workMove } from "./workTools.js";

type Call = Decision["calls"][number];

interface Assignment {
  task: string;
  /** True when no `Your task:` line was given: the agent is answering the user's request directly. */
  isReact: boolean;
  userText: string;
}

export function execute(messages: readonly ChatMessage[], offered: ReadonlySet<string>): Decision {
  const revised = labelledText(lastUserText(messages), "Your task:");
  if (revised?.startsWith(EXPLAIN.trim())) {
    return say(
      `This could not be done with my tools as planned (${cut(revised.slice(EXPLAIN.length), 200)}); the earlier attempt's error is in the results above.`,
    );
  }
  const userText = lastUserText(messages);
  const assignedTask = labelledText(userText, "Your task:");
  const assignment = { task: assignedTask ?? requestIn(userText), isReact: assignedTask === undefined, userText };
  // Tool calls named outright are the whole task: no work or research move of its own comes first.
  if (namedCalls(assignment.task, offered).length === 0) {
    const work = imageMove(messages) ?? workMove(messages, offered) ?? researchMove(messages, offered);
    if (work) return work;
  }
  const toolResults = toolResultsSinceLastUser(messages);
  if (toolResults.length > 0) {
    // The person answered the question asked first: now the rest of the task ("…, then compute 2+2").
    const made = assistantToolCalls(messages.slice(messages.findLastIndex((m) => m.role === "user")));
    const rest = made.every((call) => call.name === "ask_user") ? firstTurnCalls(assignment, offered, { answered: true }) : [];
    return rest.length > 0 ? callTools(rest) : say(reportToolResults(toolResults));
  }
  const calls = firstTurnCalls(assignment, offered);
  return calls.length > 0 ? callTools(calls) : say(`I have no tool that fits this task: ${assignment.task}`);
}

function firstTurnCalls(assignment: Assignment, offered: ReadonlySet<string>, { answered = false } = {}): Call[] {
  const { task, isReact } = assignment;
  // "use <tool> {…}" names the calls outright, for any tool offered (MCP tools included).
  // They are the whole task: once the person answered, a named question is not asked again.
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
