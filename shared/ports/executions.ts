/** What Step Functions says of a run's execution; "missing" when it was never started. */
export type ExecutionState = "RUNNING" | "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED" | "PENDING_REDRIVE" | "missing";

/**
 * The executions port: the Step Functions calls the core makes. Answers that are part of the
 * normal course (a dead task token, an execution that is gone or cannot be redriven) are results,
 * not errors; anything else throws. Adapter: StepFunctionsExecutions; fake: shared/testing/memoryExecutions.ts.
 */
export interface Executions {
  /** The execution's ARN for a run (executions are named after their runs). */
  arnFor(runId: string): string;
  /** Starts the run's execution with `{ runId }`; false if another execution has the name or the limit is reached. */
  start(runId: string): Promise<boolean>;
  /** Stops it; false if it does not exist. */
  stop(executionArn: string, error: string, cause: string): Promise<boolean>;
  describe(executionArn: string): Promise<ExecutionState>;
  /** Continues a failed, aborted or timed-out execution at the state that did not finish; false if it cannot. */
  redrive(executionArn: string, clientToken: string): Promise<boolean>;
  /** Completes a waiting callback task; false if its token is dead (used, timed out, execution gone). */
  sendTaskSuccess(taskToken: string, output: unknown): Promise<boolean>;
  /**
   * Starts `next` (a run's next execution, shared/run/continuation.ts) with `input` on the version
   * of the state machine `from` (the run's execution now) runs: a continuation keeps the run on the
   * code it started with, however many deploys came since. True also when a repeated call finds it running.
   */
  startContinuation(from: string, next: string, input: string): Promise<boolean>;
  /** How many events the execution's history holds so far. */
  historyLength(executionArn: string): Promise<number>;
  /** State transitions so far (what Step Functions bills), and whether the execution has ended. */
  stateTransitions(executionArn: string): Promise<{ count: number; final: boolean }>;
}
