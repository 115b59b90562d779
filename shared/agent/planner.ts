import { formatPlan, type Plan } from "../contracts/plan.js";
import type { PlanInput, PlanOutput } from "../contracts/steps.js";
import { NotFoundError } from "../errors.js";
import { planningTool, type PlanBoard } from "../tools/planning.js";
import { ToolRegistry } from "../tools/registry.js";
import { runAgentLoop, type RunScope } from "./loop.js";
import { plannerPrompt } from "./prompts.js";

const MAX_TASKS_PER_STEP = 40; // an inline Map runs at most 40 iterations at once

/**
 * One "Plan" state: record the last step's results, let the planner revise the plan, then choose
 * the next step's tasks for the Map, or hand over to the summarizer.
 */
export async function planStep(run: RunScope, input: PlanInput): Promise<PlanOutput> {
  const { services } = run;
  const record = await services.runs.get(run.runId);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const returning = input.taskResults !== undefined;
  const iteration = returning ? (input.iteration ?? 0) + 1 : (input.iteration ?? 0);
  const board: PlanBoard = { plan: record.plan };

  let resultsText = "";
  if (returning && board.plan && input.stepIndex !== undefined && input.stepIndex >= 0) {
    const results = await services.tasks.list(run.runId, iteration - 1);
    const failed = results.filter((t) => t.status !== "succeeded");
    board.plan = markStep(board.plan, input.stepIndex, failed.length ? "blocked" : "completed", failed.length ? `${failed.length} task(s) failed` : undefined);
    resultsText = [
      `Results of step ${input.stepIndex + 1} (${board.plan.steps[input.stepIndex]?.title}):`,
      ...results.map((t) => `- [${t.taskId}] ${t.title}: ${t.status === "succeeded" ? "" : "FAILED: "}${(t.result ?? "").slice(0, 1_500)}`),
    ].join("\n");
  }

  const budgetLeft = iteration < services.config.MAX_PLAN_ITERATIONS;
  if (budgetLeft) {
    const remaining = board.plan?.steps.filter((s) => s.status === "not_started" || s.status === "in_progress").length ?? 1;
    const userMessage = board.plan
      ? [`Request: ${record.input}`, "", "Current plan:", formatPlan(board.plan), "", resultsText, "",
          remaining === 0 ? "All steps are completed. Call finish if the request is answered, or update the plan." : "Revise the plan if the results call for it; otherwise reply briefly and the next step runs."].join("\n")
      : `Request: ${record.input}`;
    const outcome = await runAgentLoop(run, {
      scope: `plan#${iteration}`,
      role: "planner",
      messages: [
        { role: "system", content: plannerPrompt() },
        { role: "user", content: userMessage },
      ],
      tools: new ToolRegistry([planningTool(board)]),
      maxRounds: 5,
    });
    // A model that answers without planning still gets a one-step plan: the request itself.
    if (!board.plan) {
      board.plan = { title: record.input.slice(0, 80), steps: [{ title: "Answer the request", tasks: [record.input], status: "not_started" }], finished: false };
      if (outcome.kind === "answer" && outcome.text) board.plan.steps[0]!.notes = outcome.text.slice(0, 1000);
    }
  }

  const plan = board.plan!;
  const stepIndex = budgetLeft && !plan.finished ? plan.steps.findIndex((s) => s.status === "not_started" || s.status === "in_progress") : -1;
  const nextPlan = stepIndex >= 0 ? markStep(plan, stepIndex, "in_progress") : plan;
  const tasks = stepIndex >= 0 ? nextPlan.steps[stepIndex]!.tasks.slice(0, MAX_TASKS_PER_STEP).map((text, i) => ({ taskId: `t${i + 1}`, title: text.slice(0, 300), text })) : [];

  await Promise.all([
    services.runs.update(run.runId, { plan: nextPlan }),
    services.events.append(run.runId, [{ type: "plan.updated", data: { plan: nextPlan } }]),
    ...tasks.map((t) =>
      services.tasks.put(run.runId, { iteration, stepIndex, taskId: t.taskId, title: t.title, text: t.text, status: "pending" }),
    ),
  ]);
  return {
    runId: run.runId,
    mode: "plan_solve",
    iteration,
    next: stepIndex >= 0 ? "execute" : "summarize",
    stepIndex,
    tasks: tasks.map(({ taskId, title }) => ({ taskId, title })),
  };
}

function markStep(plan: Plan, index: number, status: Plan["steps"][number]["status"], notes?: string): Plan {
  return { ...plan, steps: plan.steps.map((s, i) => (i === index ? { ...s, status, notes: notes ?? s.notes } : s)) };
}
