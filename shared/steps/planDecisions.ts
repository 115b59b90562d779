import { createHash } from "node:crypto";
import type { Interrupt } from "../contracts/interrupts.js";
import type { Plan } from "../contracts/plan.js";
import { undoneText } from "../contracts/undone.js";
import { shareBudget } from "../memory/share.js";
import type { TaskRecord } from "../ports/tasks.js";

/**
 * The decisions of the planner's step ("Plan"), each a pure function of what the step read: what a
 * person's verdict on a plan means, which step the planner judges and by which results, whether the
 * iteration budget is spent, and which step runs next. shared/steps/plan.ts reads, calls these, writes.
 */

const MAX_TASKS_PER_STEP = 40; // an inline Map runs at most 40 iterations at once

/** The step the Map just ran, as the planner judges it. */
export interface ExecutedStep {
  title: string;
  index: number;
  failed: number;
  /** Tasks that ended without a tool call a person declined. */
  undone?: number;
}

/**
 * Back from "Wait for plan approval": approved → the plan runs as it is (no planner call); anything
 * else (rejected, timed out, gone) → the planner revises it, told why. Back from the planner's own
 * question (ask_user before it planned): nothing to decide, the planner goes on with the answer.
 */
export function planApproval(
  decision: Interrupt | undefined,
  plan: Plan | undefined,
): { approvedPlan: string } | { feedback: string } | undefined {
  // A question answered, or a budget extended or refused: the planner goes on (a refusal ends at the budget).
  if (decision?.kind === "ask_user" || decision?.kind === "budget") return undefined;
  if (decision?.status === "resolved" && decision.resolution?.decision === "approve" && plan) return { approvedPlan: fingerprint(plan) };
  const reason = decision?.resolution?.message ?? (decision?.status === "pending" ? "" : `the approval ${decision?.status}`);
  return { feedback: `The user rejected this plan${reason ? `: ${reason}` : ""}. Revise it with the planning tool.` };
}

/**
 * The step just run, back in progress while the planner judges its results against its done_when
 * (planning "check"), and the text that shows them: whole when they fit half the prompt budget
 * together. Undefined when no step was run (or the plan no longer has it).
 */
export function stepToJudge(
  plan: Plan | undefined,
  ranStep: number | undefined,
  results: TaskRecord[] | undefined,
  contextTokens: number,
): { plan: Plan; executed: ExecutedStep; resultsText: string } | undefined {
  const step = ranStep === undefined ? undefined : plan?.steps[ranStep];
  if (!results || !plan || !step || ranStep === undefined) return undefined;
  const index = ranStep;
  const texts = shareBudget(
    results.map((t) => t.result ?? ""),
    contextTokens * 2,
  );
  const resultsText = [
    `Results of step ${index + 1} (${step.title}):`,
    ...results.map((t, i) => `- [${t.taskId}] ${t.title}: ${t.status === "succeeded" ? "" : "FAILED: "}${undoneNote(t)}${texts[i]}`),
    "",
    `Check step ${index + 1} against its done_when (${step.doneWhen ?? "its tasks are done"}): call planning {"command": "check", "step_index": ${index}, "met": true or false, "reason": "…"}. If it is not met, revise the step's tasks with update: it runs again.`,
  ].join("\n");
  return {
    plan: {
      ...plan,
      steps: plan.steps.map((s, i) => (i === index ? { ...s, status: "in_progress" as const, verdict: undefined, undone: undefined } : s)),
    },
    executed: {
      title: step.title,
      index,
      failed: results.filter((t) => t.status !== "succeeded").length,
      undone: results.filter((t) => t.undone?.length).length,
    },
    resultsText,
  };
}

/** What a result line says first of a task a person left undone, so the planner does not read it as done. */
function undoneNote(task: TaskRecord): string {
  return task.undone?.length ? `(not done as planned: ${undoneText(task.undone)}) ` : "";
}

/**
 * Whether the planner may run another iteration and, when it may not and the plan is not finished,
 * what the run records as the reason it stopped.
 */
export function iterationBudget(plan: Plan | undefined, iteration: number, maxIterations: number): { left: boolean; stopReason?: string } {
  const left = iteration < maxIterations;
  if (left || plan?.finished) return { left };
  return {
    left,
    stopReason: `The plan iteration budget (${maxIterations}) was reached before the plan was finished; the answer covers what was done.`,
  };
}

/**
 * The step just run, after the planner's turn: met → completed; not met → it runs again (with the
 * tasks the planner revised); not judged → completed when every task succeeded, else blocked.
 */
export function judged(plan: Plan, executed: ExecutedStep): Plan {
  const at = plan.steps.findIndex((s) => s.title === executed.title);
  const index = at >= 0 ? at : executed.index;
  const step = plan.steps[index];
  // Whatever the planner judged, a step whose tasks a person left undone says so.
  const marked = executed.undone && step ? withUndone(plan, index, executed.undone) : plan;
  if (step?.status !== "in_progress") return marked; // the planner marked it itself
  if (step.verdict) return markStep(marked, index, step.verdict.met ? "completed" : "not_started");
  return markStep(
    marked,
    index,
    executed.failed ? "blocked" : "completed",
    executed.failed ? `${executed.failed} task(s) failed` : undefined,
  );
}

const withUndone = (plan: Plan, index: number, undone: number): Plan => ({
  ...plan,
  steps: plan.steps.map((s, i) => (i === index ? { ...s, undone } : s)),
});

/** A plan a person must approve first: the run asks for that, and this plan is not the one approved. */
export function needsPlanApproval(plan: Plan, asked: boolean | undefined, approvedPlan: string | undefined, budgetLeft: boolean): boolean {
  return budgetLeft && !plan.finished && asked === true && fingerprint(plan) !== approvedPlan;
}

/**
 * The step that runs next (the first not started or in progress), marked in progress, with its
 * tasks for the Map; stepIndex -1 when none runs (the plan is finished or the budget spent).
 */
export function nextStepOf(
  plan: Plan,
  iteration: number,
  budgetLeft: boolean,
): { stepIndex: number; plan: Plan; tasks: { taskId: string; title: string; text: string }[] } {
  const stepIndex =
    budgetLeft && !plan.finished ? plan.steps.findIndex((s) => s.status === "not_started" || s.status === "in_progress") : -1;
  const next = stepIndex >= 0 ? markStep(plan, stepIndex, "in_progress") : plan;
  const tasks = (next.steps[stepIndex]?.tasks ?? []).slice(0, MAX_TASKS_PER_STEP).map((text, i) => ({
    taskId: taskIdFor(iteration, i),
    title: text.slice(0, 300),
    text,
  }));
  return { stepIndex, plan: next, tasks };
}

/** Unique within the run: the step's number (its iteration, from 1) and the task's ("s2.t1"). */
const taskIdFor = (iteration: number, index: number) => `s${iteration + 1}.t${index + 1}`;

/** What a person approved: the steps and their tasks (statuses change as the run goes). */
export function fingerprint(plan: Plan): string {
  return createHash("sha256")
    .update(JSON.stringify(plan.steps.map((s) => [s.title, s.tasks])))
    .digest("hex");
}

function markStep(plan: Plan, index: number, status: Plan["steps"][number]["status"], notes?: string): Plan {
  return { ...plan, steps: plan.steps.map((s, i) => (i === index ? { ...s, status, notes: notes ?? s.notes } : s)) };
}
