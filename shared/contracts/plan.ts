import * as z from "zod";

/** Step statuses as the planning tool names them (JD Genie's PlanningTool). */
export const StepStatus = z.enum(["not_started", "in_progress", "completed", "blocked"]);
export type StepStatus = z.infer<typeof StepStatus>;

/** A step of the plan: its tasks run in parallel, one executor each. */
const PlanStep = z.object({
  title: z.string().min(1).max(500),
  tasks: z.array(z.string().min(1).max(2000)).min(1).max(40),
  doneWhen: z.string().max(1000).optional(),
  status: StepStatus,
  notes: z.string().max(4000).optional(),
  /** The planner's judgement of the step's results against its done_when (newAgent's goal check). */
  verdict: z.object({ met: z.boolean(), reason: z.string().max(1000) }).optional(),
  /** Tasks of the step a person left undone (a tool call of theirs declined), set by the run, not the planner. */
  undone: z.number().int().min(1).optional(),
});
export type PlanStep = z.infer<typeof PlanStep>;

export const Plan = z.object({
  title: z.string().max(500),
  steps: z.array(PlanStep).max(50),
  finished: z.boolean(),
});
export type Plan = z.infer<typeof Plan>;

/** "Plan: … / Steps: / 1. [status] step", the shape the seeds show the model. */
export function formatPlan(plan: Plan): string {
  const lines = [`Plan: ${plan.title}`, "Steps:"];
  plan.steps.forEach((step, i) => {
    lines.push(`${i + 1}. [${step.status}] ${step.title}`);
    for (const task of step.tasks) lines.push(`   - ${task}`);
    if (step.doneWhen) lines.push(`   done when: ${step.doneWhen}`);
    if (step.notes) lines.push(`   notes: ${step.notes}`);
    if (step.verdict)
      lines.push(`   checked: ${step.verdict.met ? "met" : "not met"}${step.verdict.reason ? ` (${step.verdict.reason})` : ""}`);
    if (step.undone) lines.push(`   not done: ${step.undone} task(s), the user declined a tool call`);
  });
  return lines.join("\n");
}
