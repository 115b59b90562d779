/** The state machine's ARN, which a handler that starts runs must be given. */
export function stateMachine(stateMachineArn: string | undefined): string {
  if (!stateMachineArn) throw new Error("STATE_MACHINE_ARN is not configured");
  return stateMachineArn;
}

/**
 * arn:…:stateMachine:Name (or its alias or version, arn:…:stateMachine:Name:live) + run id →
 * arn:…:execution:Name:runId: an execution's ARN never names the alias or version it started on.
 * Apart from the executions' adapter (stepFunctions.ts), which loads the Step Functions client.
 */
export function executionArn(stateMachineArn: string | undefined, runId: string): string {
  const [arn, partition, service, region, account, , name] = stateMachine(stateMachineArn).split(":");
  return [arn, partition, service, region, account, "execution", name, runId].join(":");
}
