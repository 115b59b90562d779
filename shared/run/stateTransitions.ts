import type { Ports } from "../ports/index.js";

/**
 * Counts the state transitions of a run's ended execution (what Step Functions bills) from its
 * history and keeps the count on the run, so later readers read it instead of paging the history
 * again. Best effort: GetExecutionHistory allows 20 calls/s per account, and a count taken before
 * the history is final is returned but not kept.
 */
export async function recordStateTransitions(
  ports: Pick<Ports, "executions" | "runs">,
  runId: string,
  executionArn: string,
): Promise<number | undefined> {
  const counted = await ports.executions.stateTransitions(executionArn).catch(() => undefined);
  if (counted?.final) await ports.runs.update(runId, { stateTransitions: counted.count });
  return counted?.count;
}
