import { DescribeExecutionCommand, ExecutionDoesNotExist, SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { executionInput } from "../../shared/contracts/steps.js";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventLog } from "../../shared/store/events.js";
import { Table } from "../../shared/store/table.js";
import type { LocalStepFunctions } from "./stepFunctions.js";

const RETENTION_DAYS = 30;

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
  const sfn = new SFNClient({});
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
  const table = new Table(doc, tableName);
  const events = new EventLog(table, RETENTION_DAYS);
  const started: string[] = [];
  const unstarted: Record<string, unknown>[] = [];
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
      // Nothing runs yet: a number taken and never written was lost with the process that took it.
      await events.fillLost(String(run.runId), Number(run.eventSeq ?? 0));
      try {
        await sfn.send(new DescribeExecutionCommand({ executionArn: String(run.executionArn) }));
      } catch (error) {
        if (!(error instanceof ExecutionDoesNotExist)) throw error;
        unstarted.push(run);
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  // Only now, with every log whole again, do the runs go on.
  const continued = stepFunctions.resumeInFlight();
  for (const run of unstarted) {
    await sfn.send(new StartExecutionCommand({ stateMachineArn: stepFunctions.aliasArn, name: String(run.runId), input: executionInput(String(run.runId)) }));
    started.push(String(run.runId));
  }
  sfn.destroy();
  doc.destroy();
  return { continued, started };
}
