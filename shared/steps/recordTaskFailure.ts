import { type ExecuteTaskOutput, type FinishTaskPorts, finishTask } from "../agent/executor.js";
import type { ExecuteTaskInput } from "../contracts/steps.js";
import type { StepPorts } from "../ports/index.js";
import { describeCause } from "../run/lifecycle.js";

export type RecordTaskFailurePorts = StepPorts<keyof FinishTaskPorts>;

/** "Record task failure": the executor crashed or timed out; the task fails, the run goes on and the planner sees it. */
export function recordTaskFailure(
  input: ExecuteTaskInput & { error: { Error: string; Cause?: string } },
  ports: RecordTaskFailurePorts,
): Promise<ExecuteTaskOutput> {
  const { error, ...task } = input;
  return finishTask({ runId: input.runId, ports }, task, "failed", `The executor stopped: ${describeCause(error)}`);
}
