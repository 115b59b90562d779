/**
 * A run's executions are named after it: `<runId>` first, then `<runId>-2`, `<runId>-3`… each time
 * the history budget makes it continue in a new execution (shared/contracts/historyBudget.ts).
 */
export function nextExecutionArn(executionArn: string, runId: string): string {
  const at = executionArn.lastIndexOf(":");
  const name = executionArn.slice(at + 1);
  const count = name === runId ? 1 : Number(name.slice(runId.length + 1));
  if (!name.startsWith(runId) || !Number.isInteger(count) || count < 1)
    throw new Error(`${executionArn} is not an execution of run ${runId}`);
  return `${executionArn.slice(0, at + 1)}${runId}-${count + 1}`;
}
