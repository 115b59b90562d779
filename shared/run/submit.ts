import { createHash, randomBytes } from "node:crypto";
import type { CreateRunRequest } from "../contracts/api.js";
import { IMAGE_TYPES, type ImageLimits, imageOverLimit } from "../contracts/imageLimits.js";
import { INPUT_FILE_NAME } from "../contracts/inputLimits.js";
import { type A2APush, emptyUsage, type RunRecord } from "../contracts/run.js";
import { BadRequestError, ConflictError, errorMessage, StepwiseError } from "../errors.js";
import { anySeesImages } from "../llm/roleSettings.js";
import { inlineBeginning, overInline, storeWhole } from "../memory/largeText.js";
import { assertDeliverableUrl } from "../net/ssrfGuard.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import { type Links, runLinks } from "../views/runView.js";
import { type EndRunPorts, endRun } from "./lifecycle.js";
import type { RunSetup } from "./runSetup.js";
import { leaveSession, makeWay, SessionBusyError } from "./sessionQueue.js";

/** What submitting touches: the run, its key and slot, its uploads, and its execution (or, on failure, its end). */
export type SubmitPorts = EndRunPorts &
  Pick<Ports, "executions" | "idempotency" | "transfers" | "sessions" | "notifyQueue" | "files"> &
  SettingsOf<"stateMachineArn" | "webhooks" | "limits" | "model" | "files">;

/** Sortable, unguessable ids: time first so listings read in order. */
export const newId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${randomBytes(10).toString("hex")}`;

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
 * it twice). With an Idempotency-Key, the same key and body give back the same run. The run first
 * claims its session: when another run is in flight there, `multitask` (the request's, else the
 * tenant's default, else `reject`) says whether it is refused, waits, or stops that run.
 */
export async function submitRun(
  ports: SubmitPorts,
  tenantId: string,
  request: CreateRunRequest,
  options: {
    links: Links;
    idempotencyKey?: string;
    a2aPush?: A2APush;
    /** The run a replay or a fork comes from (shared/run/replay.ts). */
    lineage?: Pick<RunRecord, "replayOf" | "forkOf">;
    /** Work that must be done before the run is recorded and its execution starts (a fork's journal). */
    beforeStart?: (runId: string) => Promise<void>;
  } & Omit<RunSetup, "request">,
): Promise<{ run: RunRecord; replayed: boolean }> {
  if (!ports.settings.stateMachineArn) throw new StepwiseError("STATE_MACHINE_ARN is not configured");
  if (request.webhook) {
    await assertDeliverableUrl(request.webhook.url, ports.settings.webhooks.policy);
  }

  const uploads = await uploadsOf(ports, tenantId, request.files ?? []);
  if (anySeesImages(ports.settings.model.roles)) assertImagesFit(uploads, ports.settings.files);
  const runId = newId("run");
  if (options.idempotencyKey) {
    const existing = await claimIdempotencyKey(ports, tenantId, options.idempotencyKey, request, runId);
    if (existing) return { run: existing, replayed: true };
  }
  // From here on, a failure gives back what was taken: the key (so a retry can create the run, as
  // Powertools idempotency deletes its record on error) and the tenant's slot.
  let slotTaken = false;
  let created = false;
  let claimed = false;
  const sessionId = request.sessionId ?? newId("ses");
  const multitask = request.multitask ?? options.defaultMultitask ?? "reject";
  try {
    if (!(await ports.activeRuns.acquire(tenantId, ports.settings.limits.maxActiveRunsPerTenant))) {
      throw new TooManyRunsError(ports.settings.limits.maxActiveRunsPerTenant, RETRY_AFTER_SECONDS);
    }
    slotTaken = true;
    const claim = await ports.sessions.claim(tenantId, sessionId, runId, { queue: multitask !== "reject", newSession: !request.sessionId });
    if (claim.outcome === "busy") {
      const active = await ports.runs.get(claim.activeRunId);
      throw new SessionBusyError(sessionId, { runId: claim.activeRunId, status: active?.status, links: active?.links });
    }
    claimed = true;
    const now = new Date().toISOString();
    const executionArn = ports.executions.arnFor(runId);
    const run: RunRecord = {
      schemaVersion: 1,
      runId,
      tenantId,
      sessionId,
      ...(request.sessionId ? {} : { newSession: true }),
      turn: claim.turn,
      ...(claim.outcome === "queued" ? { queuedBehind: claim.behind } : {}),
      status: "queued",
      requestedMode: request.mode,
      deepThink: request.deepThink,
      // An input too long for the record is kept whole as a run file; the record holds its beginning.
      input: inlineBeginning(request.input, INPUT_FILE_NAME),
      metadata: request.metadata ?? {},
      approval: request.approval,
      budgets: request.budgets,
      ...(options.instructions ? { instructions: options.instructions } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
      ...(options.guardrails ? { guardrails: options.guardrails } : {}),
      ...(options.toolFailures ? { toolFailures: options.toolFailures } : {}),
      ...(options.maxSandboxes ? { maxSandboxes: options.maxSandboxes } : {}),
      ...(options.budget ? { budget: options.budget } : {}),
      webhook: request.webhook && { ...request.webhook, ...(options.a2aPush ? { a2a: options.a2aPush } : {}) },
      links: runLinks(runId, executionArn, options.links),
      idempotencyKey: options.idempotencyKey,
      usage: emptyUsage(),
      executionArn,
      createdAt: now,
      updatedAt: now,
      ...options.lineage,
    };
    await options.beforeStart?.(runId);
    await ports.runs.create(run);
    created = true;
    try {
      if (uploads.length) await ports.transfers.attach(tenantId, runId, uploads);
      if (overInline(request.input)) await storeWhole(ports.files, runId, INPUT_FILE_NAME, request.input);
      await Promise.all([
        claim.outcome === "queued"
          ? ports.events
              .append(runId, [
                { type: "run.queued_behind", data: { runId: claim.behind, activeRunId: claim.activeRunId, position: claim.position } },
              ])
              .then(() => makeWay(ports, multitask, claim.activeRunId, runId))
          : ports.executions.start(runId).then((started) => {
              if (!started) throw new Error(`an execution named ${runId} exists already, or the execution limit is reached`);
            }),
        options.idempotencyKey ? ports.idempotency.complete(tenantId, options.idempotencyKey) : undefined,
      ]);
    } catch (error) {
      throw new StepwiseError(`The run could not be started: ${errorMessage(error)}`, {
        statusCode: 503,
        code: "unavailable",
        cause: error,
      });
    }
    return { run, replayed: false };
  } catch (error) {
    // Ending the run gives its slot back (once); a run never recorded gives it back here. Its place
    // in the session goes to the next run.
    if (created) await endRun(ports, runId, "failed", { error: { code: "start_failed", message: errorMessage(error) } });
    else if (slotTaken) await ports.activeRuns.release(tenantId);
    if (claimed) {
      const run = await ports.runs.get(runId);
      await leaveSession(ports, run ?? ({ runId, tenantId, sessionId, status: "failed" } as RunRecord));
    }
    if (options.idempotencyKey) await ports.idempotency.release(tenantId, options.idempotencyKey, runId);
    throw error;
  }
}

/** Refuses (400) a run whose uploaded image a vision model could not be shown: over the limit per image or per request. */
function assertImagesFit(uploads: readonly { name: string; bytes: number; contentType: string }[], limits: ImageLimits): void {
  const problem = imageOverLimit(
    uploads.filter((upload) => IMAGE_TYPES.has(upload.contentType)),
    limits,
  );
  if (problem) throw new BadRequestError(`${problem} Send a smaller image.`, { limits }, "image_too_large");
}

/** The uploads a run asks for, all of them the tenant's own: an unknown id is the client's mistake. */
async function uploadsOf(ports: Pick<Ports, "transfers">, tenantId: string, fileIds: string[]) {
  if (fileIds.length === 0) return [];
  const found = await ports.transfers.uploads(tenantId, fileIds);
  const missing = fileIds.filter((id) => !found.some((u) => u.fileId === id));
  if (missing.length) throw new BadRequestError(`No uploaded file with id ${missing.join(", ")}.`, { files: missing }, "unknown_file");
  const names = new Set(found.map((u) => u.name));
  if (names.size < found.length)
    throw new BadRequestError("Two of the files have the same name; a run's files need distinct names.", undefined, "duplicate_file_name");
  return found;
}

const bodyHash = (request: CreateRunRequest) => createHash("sha256").update(JSON.stringify(request)).digest("hex");

/** A claim whose request died before recording its run may be taken over after this long (Powertools' in-progress expiry). */
const IN_PROGRESS_SECONDS = 60;
/** How long a key stands for its run. */
const KEY_TTL_SECONDS = 86_400;

/** Claims the key for this run; returns the earlier run if the key was used with the same body. */
async function claimIdempotencyKey(
  ports: Pick<Ports, "idempotency" | "runs">,
  tenantId: string,
  key: string,
  request: CreateRunRequest,
  runId: string,
): Promise<RunRecord | undefined> {
  const hash = bodyHash(request);
  const claim = await ports.idempotency.claim(tenantId, key, {
    runId,
    bodyHash: hash,
    inProgressSeconds: IN_PROGRESS_SECONDS,
    ttlSeconds: KEY_TTL_SECONDS,
  });
  if (claim.claimed) return undefined;
  if (!claim.runId) throw new ConflictError("A request with this Idempotency-Key has just failed; retry it.", { idempotencyKey: key });
  if (claim.bodyHash !== hash) {
    throw new ConflictError("This Idempotency-Key was used with a different request body.", { idempotencyKey: key });
  }
  const run = await ports.runs.get(claim.runId);
  if (!run)
    throw new ConflictError("A request with this Idempotency-Key is still being processed; retry shortly.", { idempotencyKey: key });
  return run;
}
