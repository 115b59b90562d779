import { type ContinueRunInput, continuedInput } from "../contracts/steps.js";
import { NotFoundError } from "../errors.js";
import { logger } from "../observability.js";
import type { StepPorts } from "../ports/index.js";
import { nextExecutionArn } from "../run/continuation.js";

export type ContinueRunPorts = StepPorts<"runs" | "executions">;

/**
 * "Continue in a new execution": the history of this execution is nearly full, so the run goes on
 * in the next one (the same run, its event log and its id), with the plan's next tasks or the
 * ReAct run's next turn. The run names the new execution first,
 * so the end of this one (which then succeeds) is not taken for the run's end; a repeated call
 * finds both done. A run that has ended meanwhile (cancelled) is not continued; one that waits for a
 * person (a question asked before this execution's history filled) is, and waits in the next.
 */
export async function continueRun(input: ContinueRunInput, ports: ContinueRunPorts): Promise<{ runId: string; executionArn?: string }> {
  const { runId } = input.state;
  const run = await ports.runs.get(runId);
  if (!run) throw new NotFoundError(`run ${runId} not found`);
  const next = nextExecutionArn(input.executionArn, runId);
  if (run.executionArn !== next) {
    if (
      run.executionArn !== input.executionArn ||
      !(await ports.runs.update(runId, { executionArn: next }, ["running", "awaiting_input"]))
    ) {
      logger.info("run not continued: it is no longer running on this execution", { runId, status: run.status });
      return { runId };
    }
  }
  // On the run's version, not the newest: a deploy never moves a run mid-way (docs/operating.md).
  await ports.executions.startContinuation(input.executionArn, next, continuedInput(input.state));
  logger.info("run continues in a new execution", {
    runId,
    executionArn: next,
    ...("iteration" in input.state ? { iteration: input.state.iteration } : { turn: input.state.turn }),
  });
  return { runId, executionArn: next };
}
