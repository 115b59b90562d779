import type { PlanOutput } from "../../shared/contracts/steps.js";
import { errorMessage } from "../../shared/errors.js";
import type { Ports } from "../../shared/ports/index.js";
import { executeTask } from "../../shared/steps/executeTask.js";
import { finalize } from "../../shared/steps/finalize.js";
import { plan } from "../../shared/steps/plan.js";
import { recordFailure } from "../../shared/steps/recordFailure.js";
import { startRun } from "../../shared/steps/startRun.js";
import { summarize } from "../../shared/steps/summarize.js";

/**
 * A plan_solve run's steps in the order the state machine runs them (Start run, Plan, the Map of
 * "Execute task", Plan again, …, Summarize, Finalize), in process over the given ports; an error of
 * a step goes to "Record failure", as the machine's Catch sends it. For runs without pauses.
 */
export async function drivePlanSolve(ports: Ports, runId: string): Promise<void> {
  try {
    const state = await startRun({ runId }, ports);
    let output: PlanOutput = await plan({ ...state, mode: "plan_solve" }, ports);
    while (output.next === "execute") {
      const { iteration, tasks } = output;
      const taskResults = await Promise.all(tasks.map((task) => executeTask({ runId, iteration, task, tasks: tasks.length }, ports)));
      output = await plan({ ...output, taskResults }, ports);
    }
    if (output.next !== "summarize") throw new Error(`the run stopped at "${output.next}", which this driver does not follow`);
    await summarize({ runId }, ports);
    await finalize({ runId }, ports);
  } catch (error) {
    const name = error instanceof Error ? error.name : "Error";
    await recordFailure(
      { runId, error: { Error: name, Cause: JSON.stringify({ errorType: name, errorMessage: errorMessage(error) }) } },
      ports,
    );
  }
}
