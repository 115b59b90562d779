import { completeWaitingTask } from "../agent/interrupts.js";
import type { StepPorts } from "../ports/index.js";

export type AwaitInterruptPorts = StepPorts<"interrupts" | "executions">;

/** Every "Wait for …" callback state: keep the task token with the interrupt; resume at once if decided already. */
export async function awaitInterrupt(
  input: { runId: string; interruptId: string; taskToken: string },
  ports: AwaitInterruptPorts,
): Promise<void> {
  const interrupt = await ports.interrupts.attachToken(input.runId, input.interruptId, input.taskToken);
  if (interrupt.status !== "pending") await completeWaitingTask(ports, input.taskToken, input.interruptId);
}
