import {
  DescribeExecutionCommand,
  ExecutionDoesNotExist,
  GetExecutionHistoryCommand,
  RedriveExecutionCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from "@aws-sdk/client-sfn";
import { executionInput } from "../contracts/steps.js";
import type { ExecutionState, Executions } from "../ports/executions.js";
import { executionArn, stateMachine } from "./executionArns.js";

const EXECUTION_ENDED = new Set(["ExecutionSucceeded", "ExecutionFailed", "ExecutionAborted", "ExecutionTimedOut"]);
/** Answers of Step Functions that say "not possible now", not "something broke". */
const REFUSED = new Set(["ExecutionNotRedrivable", "ExecutionAlreadyExists", "ExecutionLimitExceeded", "ExecutionDoesNotExist"]);
const DEAD_TOKEN = new Set(["TaskTimedOut", "TaskDoesNotExist"]);

/** The alias of the state machine (and of each step function) that new runs start on. */
export const LIVE_ALIAS = "live";

/** The executions port over the Step Functions API (the run's state machine). */
export class StepFunctionsExecutions implements Executions {
  constructor(
    private readonly sfn: SFNClient,
    private readonly stateMachineArn: string | undefined,
  ) {}

  arnFor(runId: string): string {
    return executionArn(this.stateMachineArn, runId);
  }

  async start(runId: string): Promise<boolean> {
    return refusedAsFalse(
      this.sfn.send(
        new StartExecutionCommand({ stateMachineArn: stateMachine(this.stateMachineArn), name: runId, input: executionInput(runId) }),
      ),
    );
  }

  async startContinuation(from: string, next: string, input: string): Promise<boolean> {
    // The version `from` runs (an execution started on the alias records the version it resolved
    // to); one started on the bare state machine (no version) continues on the alias.
    const { stateMachineVersionArn } = await this.sfn.send(new DescribeExecutionCommand({ executionArn: from }));
    // arn:…:execution:Name:executionName → the alias arn:…:stateMachine:Name:live
    const [arn, partition, service, region, account, , machine, name] = next.split(":");
    const stateMachineArn =
      stateMachineVersionArn ?? [arn, partition, service, region, account, "stateMachine", machine, LIVE_ALIAS].join(":");
    return refusedAsFalse(this.sfn.send(new StartExecutionCommand({ stateMachineArn, name, input })));
  }

  async historyLength(executionArn: string): Promise<number> {
    // Event ids count up from 1: the newest event's id is the history's length.
    const page = await this.sfn.send(
      new GetExecutionHistoryCommand({ executionArn, maxResults: 1, reverseOrder: true, includeExecutionData: false }),
    );
    return page.events?.[0]?.id ?? 0;
  }

  async stop(executionArn: string, error: string, cause: string): Promise<boolean> {
    return refusedAsFalse(this.sfn.send(new StopExecutionCommand({ executionArn, error, cause })));
  }

  async describe(executionArn: string): Promise<ExecutionState> {
    try {
      const { status } = await this.sfn.send(new DescribeExecutionCommand({ executionArn }));
      return (status ?? "RUNNING") as ExecutionState;
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist || (error as Error).name === "ExecutionDoesNotExist") return "missing";
      throw error;
    }
  }

  async redrive(executionArn: string, clientToken: string): Promise<boolean> {
    return refusedAsFalse(this.sfn.send(new RedriveExecutionCommand({ executionArn, clientToken: clientToken.slice(0, 64) })));
  }

  async sendTaskSuccess(taskToken: string, output: unknown): Promise<boolean> {
    try {
      await this.sfn.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }));
      return true;
    } catch (error) {
      if (DEAD_TOKEN.has((error as Error).name)) return false;
      throw error;
    }
  }

  async stateTransitions(executionArn: string): Promise<{ count: number; final: boolean }> {
    let count = 0;
    let final = false;
    let nextToken: string | undefined;
    do {
      const page = await this.sfn.send(
        new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken, includeExecutionData: false }),
      );
      for (const event of page.events ?? []) {
        if (event.type?.endsWith("StateEntered")) count++;
        if (event.type && EXECUTION_ENDED.has(event.type)) final = true;
      }
      nextToken = page.nextToken;
    } while (nextToken);
    return { count, final };
  }
}

async function refusedAsFalse(call: Promise<unknown>): Promise<boolean> {
  try {
    await call;
    return true;
  } catch (error) {
    if (REFUSED.has((error as Error).name)) return false;
    throw error;
  }
}
