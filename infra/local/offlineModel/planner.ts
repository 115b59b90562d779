// Planner role: creates a two-step plan once, then finishes it when the
// orchestrator reports that every step is completed.

import { assistantToolCalls, cut, firstUserText, isFailure, oneLine, requestIn, textOf } from "./conversation.js";
import { findToolDirectives } from "./directives.js";
import { rejectionReason, reviseSteps, shownSteps } from "./planRevision.js";
import { findExpressions } from "./expressions.js";
import { callTools, say, type ChatMessage, type Decision } from "./types.js";
import { workSteps } from "./workTools.js";

const ALL_DONE_MARKER = "All steps are completed";
/** The orchestrator shows an existing plan under this heading in a fresh planning conversation. */
const CURRENT_PLAN_MARKER = "Current plan:";

export function plan(messages: readonly ChatMessage[]): Decision {
  const planningCalls = assistantToolCalls(messages).filter((call) => call.name === "planning");
  const planShown = messages.some((m) => m.role === "user" && textOf(m.content).includes(CURRENT_PLAN_MARKER));
  if (!planShown && !planningCalls.some((call) => commandOf(call.arguments) === "create")) {
    return callTools([{ name: "planning", arguments: createPlan(requestIn(firstUserText(messages))) }]);
  }
  const last = messages.at(-1);
  const reason = last?.role === "user" ? rejectionReason(textOf(last.content)) : undefined;
  if (reason !== undefined) {
    const revised = reviseSteps(shownSteps(textOf(last!.content)), reason);
    return {
      content: `Revised the plan for the feedback (${reason || "no reason given"}): ${revised.change}.`,
      calls: [{ name: "planning", arguments: { command: "update", steps: revised.steps } }],
    };
  }
  if (last?.role === "tool") return say(acknowledge(textOf(last.content), commandOf(planningCalls.at(-1)?.arguments)));
  if (last?.role === "user" && textOf(last.content).includes(ALL_DONE_MARKER)) {
    return callTools([{ name: "planning", arguments: { command: "finish" } }]);
  }
  return say("Proceeding with the next step.");
}

export function createPlan(request: string): Record<string, unknown> {
  const facts = { title: "Gather the facts", tasks: factTasks(request), done_when: "Every task of this step has returned a result." };
  const report = {
    title: "Write the report",
    tasks: ["Write a report of the results to report.md with write_artifact"],
    done_when: "report.md has been written and lists every result.",
  };
  // Tool calls named outright ("use <tool> {…}") are all the request wants, unless it asks for a report.
  const wantsReport = /\breport\b/i.test(request) || findToolDirectives(request).length === 0;
  return {
    command: "create",
    title: `Plan for: ${oneLine(request).slice(0, 60)}`,
    steps: workSteps(request) ?? (wantsReport ? [facts, report] : [facts]),
  };
}

/** Independent tasks for the first step; always at least two so they can run in parallel. */
function factTasks(request: string): string[] {
  // Each named tool call is a task of its own, so they run in parallel.
  const directives = findToolDirectives(request);
  if (directives.length > 0) return directives.map((directive) => directive.text);
  const expressions = findExpressions(request);
  const tasks = expressions.map((expression) => `Evaluate ${expression} with the calculator`);
  if (expressions.length >= 2) return tasks;
  tasks.push("Measure the request text with text_stats");
  if (tasks.length < 2) tasks.push(`Measure the text "${firstClause(request)}" with text_stats`);
  return tasks;
}

function firstClause(request: string): string {
  const clause = oneLine(request).split(/[.;!?,]\s|\s(?:and|then)\s/i)[0] ?? "";
  return cut(clause.replace(/["“”]/g, "").trim(), 80);
}

function commandOf(args: unknown): unknown {
  return typeof args === "object" && args !== null ? (args as { command?: unknown }).command : undefined;
}

function acknowledge(toolResult: string, command: unknown): string {
  if (isFailure(toolResult)) return `The planning tool reported: ${cut(toolResult.trim(), 300)}`;
  if (command === "create") return "Plan recorded.";
  if (command === "finish") return "Plan finished.";
  return "Plan updated.";
}
