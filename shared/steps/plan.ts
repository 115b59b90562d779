import { planStep, type PlannerPorts } from "../agent/planner.js";
import type { PlanInput, PlanOutput } from "../contracts/steps.js";
import type { StepPorts } from "../ports/index.js";

export type PlanPorts = StepPorts<keyof PlannerPorts>;

/** "Plan": record the last step's results, revise the plan, ask for approval or hand the next tasks to the Map. */
export function plan(input: PlanInput, ports: PlanPorts): Promise<PlanOutput> {
  return planStep({ runId: input.runId, ports, deadline: ports.deadline }, input);
}
