// Planner role: creates a two-step plan once, then finishes it when the
// orchestrator reports that every step is completed.

import { assistantToolCalls, cut, firstUserText, isFailure, listedFiles, listedTools, oneLine, requestIn, textOf } from "./conversation.js";
import { findToolDirectives } from "./directives.js";
import { findExpressions } from "./expressions.js";
import { imageSteps } from "./images.js";
import { rejectionReason, reviseSteps, shownSteps } from "./planRevision.js";
import { researchSteps } from "./research.js";
import { type ChatMessage, callTools, type Decision, say } from "./types.js";
import { workSteps } from "./workTools.js";

/** The orchestrator shows an existing plan under this heading in a fresh planning conversation. */
const CURRENT_PLAN_MARKER = "Current plan:";
/** After a step: 'Check step N against its done_when (…): call planning {"command": "check", "step_index": N-1, …}'. */
const CHECK = /Check step \d+ against its done_when[^\n]*"step_index": (\d+)/;
/** A revised task: the executor explains in words, with no tool (the tool failed already). */
export const EXPLAIN = "Explain why this could not be done: ";
const LAST_STEP_MARKER = "All steps are completed once this last step's check is met";

export function plan(messages: readonly ChatMessage[], offered: ReadonlySet<string> = new Set()): Decision {
  const planningCalls = assistantToolCalls(messages).filter((call) => call.name === "planning");
  const planShown = messages.some((m) => m.role === "user" && textOf(m.content).includes(CURRENT_PLAN_MARKER));
  if (!planShown && !planningCalls.some((call) => commandOf(call.arguments) === "create")) {
    const text = firstUserText(messages);
    const request = requestIn(text);
    // "Ask me …": a requirement only the user has. Asked once, before planning, when ask_user is offered.
    const asked = assistantToolCalls(messages).some((call) => call.name === "ask_user");
    const missing = /\bask me\b\s*([^,.;!?]*)/i.exec(request)?.[1]?.trim();
    if (missing !== undefined && offered.has("ask_user") && !asked) {
      return callTools([{ name: "ask_user", arguments: { question: `Before I plan: ${missing || "what should I know first"}?` } }]);
    }
    const reply = messages.at(-1);
    const answer = asked && reply?.role === "tool" ? oneLine(textOf(reply.content)).replace(/^The user answered:\s*/i, "") : undefined;
    const created = createPlan(request, listedTools(messages), listedFiles(messages), text);
    if (answer) created.title = `${created.title as string} (you said: ${cut(answer, 80)})`;
    return callTools([{ name: "planning", arguments: created }]);
  }
  const last = messages.at(-1);
  const userText = last?.role === "user" ? textOf(last.content) : undefined;
  const reason = userText === undefined ? undefined : rejectionReason(userText);
  if (userText !== undefined && reason !== undefined) {
    const revised = reviseSteps(shownSteps(userText), reason);
    return {
      content: `Revised the plan for the feedback (${reason || "no reason given"}): ${revised.change}.`,
      calls: [{ name: "planning", arguments: { command: "update", steps: revised.steps } }],
    };
  }
  if (last?.role === "tool") return say(acknowledge(textOf(last.content), commandOf(planningCalls.at(-1)?.arguments)));
  const check = userText === undefined ? null : CHECK.exec(userText);
  if (userText !== undefined && check) return checkStep(userText, Number(check[1]));
  return say("Proceeding with the next step.");
}

/**
 * The step's done_when judged from its results: met when every task returned a result and no tool
 * failed. Met: checked, and finished after the last step. Not met: checked, and the step revised —
 * only the tasks that failed are kept, each become a task to explain why it could not be done — so it runs again.
 */
function checkStep(text: string, index: number): Decision {
  const results = text.split(/\r?\n/).filter((line) => /^- \[[\w.]+\] /.test(line));
  // A person's rejection is their decision, not a failure to redo.
  const failed = results.filter(
    (line) => /: FAILED: |The tool reported:|Not every tool call succeeded/.test(line) && !/Rejected by the user/.test(line),
  );
  const met = failed.length === 0;
  // Met, but not as asked: the check says what the person refused, so "met" does not read as "done as planned".
  const rejected = results.filter((line) => /Rejected by the user/.test(line)).length;
  const reason = met
    ? `every task returned a result (${results.length})${rejected ? `; ${rejected} left undone: the user rejected its tool call` : ""}`
    : `${failed.length} of ${results.length} task(s) did not succeed: ${cut(oneLine(failed[0].replace(/^- \[[\w.]+\] /, "")), 160)}`;
  const calls: Decision["calls"] = [{ name: "planning", arguments: { command: "check", step_index: index, met, reason } }];
  if (met && text.includes(LAST_STEP_MARKER)) calls.push({ name: "planning", arguments: { command: "finish" } });
  if (!met) {
    const steps = shownSteps(text);
    const step = steps[index];
    if (step) {
      // Result lines name their task "[s1.t2]": the step's second task.
      const failedAt = new Set(failed.map((line) => Number(/^- \[s\d+\.t(\d+)\]/.exec(line)?.[1] ?? 0) - 1));
      // Only what was not done runs again: each failed task, revised; the results of the others stand.
      step.tasks = step.tasks.flatMap((task, i) => (failedAt.has(i) ? [`${EXPLAIN}${task.replace(/\buse\s+/g, "")}`] : []));
      calls.push({ name: "planning", arguments: { command: "update", steps } });
    }
  }
  return { content: null, calls };
}

/**
 * A plan made only of what the request offers: tasks for the tools its executors have (the tools
 * the planner's prompt lists) over the files whose names reached it. Tool calls named outright
 * ("use <tool> {…}") are all the request wants, unless it asks for a report.
 */
/** `text`: the whole message the request came in (its fenced code, on lines after the request's first). */
export function createPlan(request: string, team: ReadonlySet<string>, files: readonly string[], text = request): Record<string, unknown> {
  const facts = factTasks(request, team);
  const gather = {
    title: "Gather the facts",
    tasks: facts.length ? facts : [`Answer the request: ${cut(oneLine(request), 200)}`],
    done_when: "Every task of this step has returned a result.",
  };
  const report = {
    title: "Write the report",
    tasks: ["Write a report of the results to report.md with write_artifact"],
    done_when: "report.md has been written and lists every result.",
  };
  const directives = findToolDirectives(request);
  const named = directives.some((directive) => team.has(directive.name));
  // A report asked for in words, not one a named call's arguments mention.
  const words = directives.reduce((rest, directive) => rest.replace(directive.text, " "), request);
  const wantsReport = team.has("write_artifact") && (/\breport\b/i.test(words) || !named);
  // Named tool calls are planned as written: no analysis or research plan of its own replaces them.
  const ownSteps = named
    ? undefined
    : (imageSteps(request, files) ?? workSteps(request, team, files, text) ?? researchSteps(request, team, files));
  return {
    command: "create",
    title: `Plan for: ${oneLine(request).slice(0, 60)}`,
    steps: ownSteps ?? (wantsReport ? [gather, report] : [gather]),
  };
}

/** Independent tasks for the first step, for the tools the team has; at least two when it can, so they run in parallel. */
function factTasks(request: string, team: ReadonlySet<string>): string[] {
  // Each named tool call is a task of its own, so they run in parallel.
  const directives = findToolDirectives(request).filter((directive) => team.has(directive.name));
  if (directives.length > 0) return directives.map((directive) => directive.text);
  const expressions = team.has("calculator") ? findExpressions(request) : [];
  const tasks = expressions.map((expression) => `Evaluate ${expression} with the calculator`);
  if (expressions.length >= 2 || !team.has("text_stats")) return tasks;
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
