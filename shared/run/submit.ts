import { createHash, randomBytes } from "node:crypto";
import { StartExecutionCommand } from "@aws-sdk/client-sfn";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { CreateRunRequest } from "../contracts/api.js";
import { emptyUsage, TERMINAL_STATUSES, type RunRecord } from "../contracts/run.js";
import { BadRequestError, ConflictError, StepwiseError, errorMessage } from "../errors.js";
import type { Services } from "../services.js";
import { assertDeliverableUrl } from "../webhooks/ssrfGuard.js";
import { endRun } from "./lifecycle.js";
import { runLinks, type Links } from "./view.js";
import { stopExecutionOf } from "./resume.js";

/** Sortable, unguessable ids: time first so listings read in order. */
export const newId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${randomBytes(10).toString("hex")}`;

/** arn:…:stateMachine:Name + run id → arn:…:execution:Name:runId (the execution is named after the run). */
export function executionArnFor(stateMachineArn: string, runId: string): string {
  return `${stateMachineArn.replace(":stateMachine:", ":execution:")}:${runId}`;
}

/** Too many runs going for this tenant: come back later (429). */
export class TooManyRunsError extends StepwiseError {
  constructor(
    limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`This API key has ${limit} runs going, its limit. Retry after ${retryAfterSeconds} s, or cancel a run.`, {
      statusCode: 429,
      code: "too_many_runs",
      details: { limit },
    });
  }
}

const RETRY_AFTER_SECONDS = 5;

/**
 * Records the run, then starts its execution (named after the run, so a retried start cannot run
 * it twice). With an Idempotency-Key, the same key and body give back the same run.
 */
export async function submitRun(
  services: Services,
  tenantId: string,
  request: CreateRunRequest,
  options: { links: Links; idempotencyKey?: string },
): Promise<{ run: RunRecord; replayed: boolean }> {
  const stateMachineArn = services.config.STATE_MACHINE_ARN;
  if (!stateMachineArn) throw new StepwiseError("STATE_MACHINE_ARN is not configured");
  if (request.webhook) {
    await assertDeliverableUrl(request.webhook.url, { allowLoopback: services.config.WEBHOOK_ALLOW_LOOPBACK, allowHttp: services.config.WEBHOOK_ALLOW_HTTP });
  }

  const uploads = await uploadsOf(services, tenantId, request.files ?? []);
  const runId = newId("run");
  if (options.idempotencyKey) {
    const existing = await claimIdempotencyKey(services, tenantId, options.idempotencyKey, request, runId);
    if (existing) return { run: existing, replayed: true };
  }
  // From here on, a failure gives back what was taken: the key (so a retry can create the run, as
  // Powertools idempotency deletes its record on error) and the tenant's slot.
  let slotTaken = false;
  let created = false;
  try {
    if (!(await services.activeRuns.acquire(tenantId, services.config.MAX_ACTIVE_RUNS_PER_TENANT))) {
      throw new TooManyRunsError(services.config.MAX_ACTIVE_RUNS_PER_TENANT, RETRY_AFTER_SECONDS);
    }
    slotTaken = true;
    const now = new Date().toISOString();
    const executionArn = executionArnFor(stateMachineArn, runId);
    const run: RunRecord = {
      schemaVersion: 1,
      runId,
      tenantId,
      sessionId: request.sessionId ?? newId("ses"),
    ...(request.sessionId ? {} : { newSession: true }),
      status: "queued",
      requestedMode: request.mode,
      deepThink: request.deepThink,
      input: request.input,
      metadata: request.metadata ?? {},
      approval: request.approval,
      budgets: request.budgets,
      webhook: request.webhook,
      links: runLinks(runId, executionArn, options.links),
      idempotencyKey: options.idempotencyKey,
      usage: emptyUsage(),
      executionArn,
      createdAt: now,
      updatedAt: now,
    };
    await services.runs.create(run);
    created = true;
    try {
      if (uploads.length) await services.transfers.attach(tenantId, runId, uploads);
      await Promise.all([
        services.sfn.send(new StartExecutionCommand({ stateMachineArn, name: runId, input: JSON.stringify({ runId }) })),
        options.idempotencyKey ? completeIdempotencyKey(services, tenantId, options.idempotencyKey) : undefined,
      ]);
    } catch (error) {
      throw new StepwiseError(`The run could not be started: ${errorMessage(error)}`, { statusCode: 503, code: "unavailable", cause: error });
    }
    return { run, replayed: false };
  } catch (error) {
    // Ending the run gives its slot back (once); a run never recorded gives it back here.
    if (created) await endRun(services, runId, "failed", { error: { code: "start_failed", message: errorMessage(error) } });
    else if (slotTaken) await services.activeRuns.release(tenantId);
    if (options.idempotencyKey) await releaseIdempotencyKey(services, tenantId, options.idempotencyKey, runId);
    throw error;
  }
}

/** The uploads a run asks for, all of them the tenant's own: an unknown id is the client's mistake. */
async function uploadsOf(services: Services, tenantId: string, fileIds: string[]) {
  if (fileIds.length === 0) return [];
  const found = await services.transfers.uploads(tenantId, fileIds);
  const missing = fileIds.filter((id) => !found.some((u) => u.fileId === id));
  if (missing.length) throw new BadRequestError(`No uploaded file with id ${missing.join(", ")}.`, { files: missing }, "unknown_file");
  const names = new Set(found.map((u) => u.name));
  if (names.size < found.length) throw new BadRequestError("Two of the files have the same name; a run's files need distinct names.", undefined, "duplicate_file_name");
  return found;
}

/** Stops the execution; the run ends cancelled (the status-change notification sends the webhook). */
export async function cancelRun(services: Services, run: RunRecord, reason: string): Promise<void> {
  if (TERMINAL_STATUSES.has(run.status)) throw new ConflictError(`Run ${run.runId} has already ended (${run.status}).`, { status: run.status });
  if (!(await endRun(services, run.runId, "cancelled", { error: { code: "cancelled", message: reason } }))) {
    const now = await services.runs.get(run.runId);
    throw new ConflictError(`Run ${run.runId} has already ended (${now?.status}).`, { status: now?.status });
  }
  await stopExecutionOf(services, run, reason);
}

const idempotencyKey = (tenantId: string, key: string) => ({ pk: `TENANT#${tenantId}`, sk: `IDEM#${createHash("sha256").update(key).digest("hex")}` });
const bodyHash = (request: CreateRunRequest) => createHash("sha256").update(JSON.stringify(request)).digest("hex");

/** A claim whose request died before recording its run may be taken over after this long (Powertools' in-progress expiry). */
const IN_PROGRESS_SECONDS = 60;

/** Claims the key for this run; returns the earlier run if the key was used with the same body. */
async function claimIdempotencyKey(services: Services, tenantId: string, key: string, request: CreateRunRequest, runId: string): Promise<RunRecord | undefined> {
  const now = Math.floor(Date.now() / 1000);
  const item = { ...idempotencyKey(tenantId, key), runId, bodyHash: bodyHash(request), ttl: now + 86_400, inProgressUntil: now + IN_PROGRESS_SECONDS };
  try {
    await services.table.doc.send(
      new PutCommand({
        TableName: services.table.name,
        Item: item,
        ConditionExpression: "attribute_not_exists(pk) OR inProgressUntil < :now",
        ExpressionAttributeValues: { ":now": now },
      }),
    );
    return undefined;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  const { Item } = await services.table.doc.send(new GetCommand({ TableName: services.table.name, Key: idempotencyKey(tenantId, key), ConsistentRead: true }));
  if (!Item) throw new ConflictError("A request with this Idempotency-Key has just failed; retry it.", { idempotencyKey: key });
  if (Item.bodyHash !== item.bodyHash) {
    throw new ConflictError("This Idempotency-Key was used with a different request body.", { idempotencyKey: key });
  }
  const run = await services.runs.get(Item.runId as string);
  if (!run) throw new ConflictError("A request with this Idempotency-Key is still being processed; retry shortly.", { idempotencyKey: key });
  return run;
}

/** The run exists and is started: the key now stands for it for 24 hours. */
async function completeIdempotencyKey(services: Services, tenantId: string, key: string): Promise<void> {
  await services.table.doc.send(new UpdateCommand({ TableName: services.table.name, Key: idempotencyKey(tenantId, key), UpdateExpression: "REMOVE inProgressUntil" }));
}

/** Gives the key back, if it is still this request's. */
async function releaseIdempotencyKey(services: Services, tenantId: string, key: string, runId: string): Promise<void> {
  try {
    await services.table.doc.send(
      new DeleteCommand({ TableName: services.table.name, Key: idempotencyKey(tenantId, key), ConditionExpression: "runId = :runId", ExpressionAttributeValues: { ":runId": runId } }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
