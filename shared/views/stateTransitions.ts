import type { Ports } from "../ports/index.js";

/**
 * State transitions of an execution (what Step Functions bills), counted from its history, and
 * whether the execution has ended (only then is the count final).
 */
export function countStateTransitions(ports: Pick<Ports, "executions">, executionArn: string): Promise<{ count: number; final: boolean }> {
  return ports.executions.stateTransitions(executionArn);
}
