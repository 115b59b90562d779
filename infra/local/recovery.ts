import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DescribeExecutionCommand, ExecutionDoesNotExist, SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { RunRecord } from "../../shared/contracts/run.js";
import { executionInput } from "../../shared/contracts/steps.js";
import { TERMINAL_STATUSES } from "../../shared/contracts/terminal.js";
import type { SessionQueuePorts } from "../../shared/run/sessionQueue.js";
import { EventLog } from "../../shared/store/events.js";
import { keys } from "../../shared/store/keys.js";
import { RunStore } from "../../shared/store/runs.js";
import { SessionStore } from "../../shared/store/sessions.js";
import { StepFunctionsExecutions } from "../../shared/store/stepFunctions.js";
import { Table } from "../../shared/store/table.js";
import type { LocalStepFunctions } from "./stepFunctions.js";

const RETENTION_DAYS = 30;

const IN_FLIGHT = ["queued", "running", "awaiting_input"];

export interface RecoveryReport {
  /** Executions continued from where they stopped. */
  continued: string[];
  /** Runs in flight that had no execution (the process stopped between recording the run and starting it): started now. */
  started: string[];
  /** Sessions whose active run had ended (the process stopped before the next waiting run took over): handed on now. */
  handedOn: string[];
}

/**
 * After a restart on a kept data folder, no run stays in flight without an execution behind it:
 * the executions that were running continue, and a run recorded but never started gets its
 * execution (named after the run, with the input submit would have given it).
 */
export async function recoverRuns(stepFunctions: LocalStepFunctions, tableName: string): Promise<RecoveryReport> {
  const sfn = new SFNClient({});
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
  const table = new Table(async () => doc, tableName);
  const events = new EventLog(table, RETENTION_DAYS);
  const sessions = new SessionStore(table, RETENTION_DAYS);
  const started: string[] = [];
  const unstarted: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: "sk = :meta AND begins_with(pk, :run) AND #status IN (:s0, :s1, :s2)",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":meta": keys.metaSk,
          ":run": keys.runPkPrefix,
          ":s0": IN_FLIGHT[0],
          ":s1": IN_FLIGHT[1],
          ":s2": IN_FLIGHT[2],
        },
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
  const continued = stepFunctions.continueInFlight();
  for (const run of unstarted) {
    // A run waiting in its session's queue has no execution yet, rightly: it starts when its turn comes.
    if (run.turn !== undefined && (await sessions.runs(String(run.tenantId), String(run.sessionId))).activeRunId !== run.runId) continue;
    await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: stepFunctions.aliasArn,
        name: String(run.runId),
        input: executionInput(String(run.runId)),
      }),
    );
    started.push(String(run.runId));
  }
  const handedOn = await handOnEndedSessions(doc, tableName, {
    sessions,
    runs: new RunStore(table, RETENTION_DAYS),
    events,
    executions: new StepFunctionsExecutions(sfn, stepFunctions.aliasArn),
  });
  sfn.destroy();
  doc.destroy();
  return { continued, started, handedOn };
}

/**
 * A session whose active run has ended was stopped between that run's end and the hand-over to the
 * next waiting run (or before the interrupted run's turn was written): both are done now.
 */
async function handOnEndedSessions(doc: DynamoDBDocumentClient, tableName: string, ports: SessionQueuePorts): Promise<string[]> {
  // Loaded here, not at the top: the core's metrics need the invocation store the stack sets up first.
  const { leaveSession } = await import("../../shared/run/sessionQueue.js");
  const handedOn: string[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: "sk = :meta AND begins_with(pk, :session) AND attribute_exists(activeRun)",
        ExpressionAttributeValues: { ":meta": keys.metaSk, ":session": keys.sessionPkPrefix },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const session of page.Items ?? []) {
      const active = await ports.runs.get(String(session.activeRun));
      // Still going, or ended but its execution has yet to reach a safe point: its end hands on.
      if (active && (!TERMINAL_STATUSES.has(active.status) || (await ports.executions.describe(active.executionArn)) === "RUNNING"))
        continue;
      // Never recorded: its submit was stopped between claiming the session and recording the run.
      const { tenantId, sessionId } = keys.sessionOfPk(String(session.pk));
      await leaveSession(ports, active ?? ({ runId: String(session.activeRun), tenantId, sessionId, status: "failed" } as RunRecord));
      handedOn.push(String(session.pk));
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return handedOn;
}
