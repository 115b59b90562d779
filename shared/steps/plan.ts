import { planStep, type PlannerPorts } from "../agent/planner.js";
import type { PlanInput, PlanOutput, TaskResult } from "../contracts/steps.js";
import { UnprocessableError } from "../errors.js";
import type { StepPorts } from "../ports/index.js";
import { handBackEvents, historyVerdict, iterationEvents, newExecutionHoldsHandBacks, HISTORY_RESERVE } from "../run/historyBudget.js";

export type PlanPorts = StepPorts<keyof PlannerPorts | "executions">;

const RAISE_BUDGET = "raise the budget (at most 25,000)";

/**
 * "Plan": record the last step's results, revise the plan, ask for approval or hand the next tasks
 * to the Map — in this execution if its history has room for them, else in the run's next one.
 * Tasks the last Map deferred (its history could not hold their hand-backs) go on in the next
 * execution first: the step is not finished, so the planner has nothing to judge yet.
 */
export async function plan(input: PlanInput, ports: PlanPorts): Promise<PlanOutput> {
  const budget = ports.config.HISTORY_EVENT_BUDGET;
  const deferred = input.taskResults?.filter((result) => result.deferred) ?? [];
  if (deferred.length > 0) return continueStep(input, deferred, budget);
  const output = await planStep({ runId: input.runId, ports, deadline: ports.deadline }, input);
  if (output.next !== "execute") return output;
  const run = await ports.runs.get(input.runId);
  const used = run ? await ports.executions.historyLength(run.executionArn) : 0;
  const verdict = historyVerdict(used, output.tasks.length, budget);
  if (verdict === "fits") return output;
  if (verdict === "continue") return { ...output, next: "continue" };
  throw new UnprocessableError(
    `A plan step of ${output.tasks.length} tasks needs about ${iterationEvents(output.tasks.length) + HISTORY_RESERVE} Step Functions history events, more than one execution may use (HISTORY_EVENT_BUDGET = ${budget}): ${RAISE_BUDGET}.`,
    "history_budget",
  );
}

/** The deferred tasks of the step, in the run's next execution (same iteration, same step). */
function continueStep(input: PlanInput, deferred: TaskResult[], budget: number): PlanOutput {
  if (!newExecutionHoldsHandBacks(deferred.length, budget)) {
    throw new UnprocessableError(
      `${deferred.length} tasks waiting at once need about ${handBackEvents(deferred.length)} Step Functions history events, more than one execution may use (HISTORY_EVENT_BUDGET = ${budget}): ${RAISE_BUDGET}.`,
      "history_budget",
    );
  }
  return {
    runId: input.runId,
    mode: "plan_solve",
    iteration: input.iteration ?? 0,
    revision: input.revision ?? 0,
    next: "continue",
    stepIndex: input.stepIndex ?? -1,
    tasks: deferred.map(({ task }) => task),
  };
}
