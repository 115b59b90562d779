import { randomBytes } from "node:crypto";
import { StartExecutionCommand } from "@aws-sdk/client-sfn";
import type { CreateRunRequest } from "../contracts/api.js";
import { emptyUsage, type RunRecord } from "../contracts/run.js";
import { StepwiseError, errorMessage } from "../errors.js";
import type { Services } from "../services.js";

/** Sortable, unguessable ids: time first so listings read in order. */
export const newId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${randomBytes(10).toString("hex")}`;

/** arn:…:stateMachine:Name + run id → arn:…:execution:Name:runId (the execution is named after the run). */
export function executionArnFor(stateMachineArn: string, runId: string): string {
  return `${stateMachineArn.replace(":stateMachine:", ":execution:")}:${runId}`;
}

/**
 * Records the run, then starts its execution (named after the run, so a retried start cannot run
 * it twice). Two round trips; nothing else is on the client's path.
 */
export async function submitRun(services: Services, tenantId: string, request: CreateRunRequest): Promise<RunRecord> {
  const stateMachineArn = services.config.STATE_MACHINE_ARN;
  if (!stateMachineArn) throw new StepwiseError("STATE_MACHINE_ARN is not configured");
  const runId = newId("run");
  const now = new Date().toISOString();
  const run: RunRecord = {
    schemaVersion: 1,
    runId,
    tenantId,
    sessionId: request.sessionId ?? newId("ses"),
    status: "queued",
    requestedMode: request.mode,
    deepThink: request.deepThink,
    input: request.input,
    metadata: request.metadata ?? {},
    approval: request.approval,
    usage: emptyUsage(),
    executionArn: executionArnFor(stateMachineArn, runId),
    createdAt: now,
    updatedAt: now,
  };
  await services.runs.create(run);
  try {
    await services.sfn.send(new StartExecutionCommand({ stateMachineArn, name: runId, input: JSON.stringify({ runId }) }));
  } catch (error) {
    const failure = { code: "start_failed", message: `The run could not be started: ${errorMessage(error)}` };
    await services.runs.update(runId, { status: "failed", error: failure, endedAt: new Date().toISOString() });
    throw new StepwiseError(failure.message, { statusCode: 503, code: "unavailable", cause: error });
  }
  return run;
}
