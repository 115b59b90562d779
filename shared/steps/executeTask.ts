import { executeTask as runExecutor, type ExecuteTaskOutput, type ExecutorPorts } from "../agent/executor.js";
import type { ExecuteTaskInput } from "../contracts/steps.js";
import type { StepPorts } from "../ports/index.js";

export type ExecuteTaskPorts = StepPorts<keyof ExecutorPorts>;

/** "Execute task" (one Map item): one executor works on one task of the current step. */
export function executeTask(input: ExecuteTaskInput, ports: ExecuteTaskPorts): Promise<ExecuteTaskOutput> {
  return runExecutor({ runId: input.runId, ports, deadline: ports.deadline }, input);
}
