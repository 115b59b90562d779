import { DescribeExecutionCommand, ExecutionDoesNotExist, SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { LocalStepFunctions } from "./stepFunctions.js";

const IN_FLIGHT = ["queued", "running", "awaiting_input"];

export interface RecoveryReport {
  /** Executions continued from where they stopped. */
  continued: string[];
  /** Runs in flight that had no execution (the process stopped between recording the run and starting it): started now. */
  started: string[];
}

/**
 * After a restart on a kept data folder, no run stays in flight without an execution behind it:
 * the executions that were running continue, and a run recorded but never started gets its
 * execution (named after the run, with the input submit would have given it).
 */
export async function recoverRuns(stepFunctions: LocalStepFunctions, tableName: string): Promise<RecoveryReport> {
  const continued = stepFunctions.resumeInFlight();
  const sfn = new SFNClient({});
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
  const started: string[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: "sk = :meta AND begins_with(pk, :run) AND #status IN (:s0, :s1, :s2)",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":meta": "META", ":run": "RUN#", ":s0": IN_FLIGHT[0], ":s1": IN_FLIGHT[1], ":s2": IN_FLIGHT[2] },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const run of page.Items ?? []) {
      const executionArn = String(run.executionArn);
      try {
        await sfn.send(new DescribeExecutionCommand({ executionArn }));
      } catch (error) {
        if (!(error instanceof ExecutionDoesNotExist)) throw error;
        await sfn.send(new StartExecutionCommand({ stateMachineArn: stepFunctions.stateMachineArn, name: String(run.runId), input: JSON.stringify({ runId: run.runId }) }));
        started.push(String(run.runId));
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  sfn.destroy();
  doc.destroy();
  return { continued, started };
}
