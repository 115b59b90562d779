import { type ExecuteTaskOutput, type ExecutorPorts, runExecutor } from "../agent/executor.js";
import { handBackVerdict } from "../contracts/historyBudget.js";
import type { ExecuteTaskInput } from "../contracts/steps.js";
import type { StepPorts } from "../ports/index.js";

export type ExecuteTaskPorts = StepPorts<keyof ExecutorPorts | "executions">;

/**
 * "Execute task" (one Map item): one executor works on one task of the current step. When it hands
 * back (it waits for a person, or its time is up) and this execution's history could not hold that
 * for every task of the Map, the task is deferred: "Plan" hands it to the run's next execution,
 * where it resumes from its journal (an open question stays open and is waited for there). Each
 * hand-back asks for the execution's own count: its Map's other executors may have handed back
 * too, which no state here can know (a hand-back follows a person's decision or a turn's time).
 */
export async function executeTask(input: ExecuteTaskInput, ports: ExecuteTaskPorts): Promise<ExecuteTaskOutput> {
  const ran = await runExecutor({ runId: input.runId, ports, deadline: ports.deadline }, input);
  // "Plan" adds up the Map's hand-backs for its history estimate.
  const output = ran.done ? ran : { ...ran, handBacks: (input.handBacks ?? 0) + 1 };
  if (output.done || !input.executionArn) return output;
  const used = await ports.executions.historyLength(input.executionArn);
  if (handBackVerdict(used, input.tasks ?? 1, ports.settings.budgets.historyEvents) === "fits") return output;
  const { interruptId: _waitsThere, ...rest } = output;
  return { ...rest, done: false, deferred: true };
}
