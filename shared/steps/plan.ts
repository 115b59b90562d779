import { planStep, type PlannerPorts } from "../agent/planner.js";
import type { PlanInput, PlanOutput } from "../contracts/steps.js";
import { UnprocessableError } from "../errors.js";
import type { StepPorts } from "../ports/index.js";
import { historyVerdict, iterationEvents, HISTORY_RESERVE } from "../run/historyBudget.js";

export type PlanPorts = StepPorts<keyof PlannerPorts | "executions">;

/**
 * "Plan": record the last step's results, revise the plan, ask for approval or hand the next tasks
 * to the Map — in this execution if its history has room for them, else in the run's next one.
 */
export async function plan(input: PlanInput, ports: PlanPorts): Promise<PlanOutput> {
  const output = await planStep({ runId: input.runId, ports, deadline: ports.deadline }, input);
  if (output.next !== "execute") return output;
  const run = await ports.runs.get(input.runId);
  const used = run ? await ports.executions.historyLength(run.executionArn) : 0;
  const budget = ports.config.HISTORY_EVENT_BUDGET;
  const verdict = historyVerdict(used, output.tasks.length, budget);
  if (verdict === "fits") return output;
  if (verdict === "continue") return { ...output, next: "continue" };
  throw new UnprocessableError(
    `A plan step of ${output.tasks.length} tasks needs about ${iterationEvents(output.tasks.length) + HISTORY_RESERVE} Step Functions history events, more than one execution may use (HISTORY_EVENT_BUDGET = ${budget}): raise the budget (at most 25,000).`,
    "history_budget",
  );
}
