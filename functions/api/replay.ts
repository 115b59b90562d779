import { ExportedRun, ForkRunRequest, ReplayRunRequest } from "../../shared/contracts/replay.js";
import { ownRun } from "../../shared/run/access.js";
import { compareReplay, exportRun, forkRun, importRun, replayRun } from "../../shared/run/replay.js";
import { runLinks } from "../../shared/views/runView.js";
import { type HttpResult, json } from "../http.js";
import { parseBody } from "../jsonBody.js";
import { linksFor } from "../links.js";
import type { Request, Route } from "./routes.js";

/**
 * `POST /v1/runs/{runId}/replay`: the ended run again on the current code, every model and tool
 * call answered from its journal; 202 with the new run (409 while the run is in flight).
 * `GET /v1/runs/{runId}/replay` on that new run: identical, diverged (where, both sides), or running.
 */
async function replay({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const parent = await ownRun(services, tenantId, params.runId);
  const body = event.body ? parseBody(event, ReplayRunRequest) : {};
  const run = await replayRun(services, parent, body, linksFor(event, services));
  return started(event, services, run);
}

async function comparison({ services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  return json(200, await compareReplay(services, run));
}

/** `POST /v1/runs/{runId}/fork {at, edits}`: a new run that reuses the journal up to `at`, with the edits, then goes on live. */
async function fork({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const parent = await ownRun(services, tenantId, params.runId);
  const run = await forkRun(services, parent, parseBody(event, ForkRunRequest), linksFor(event, services));
  return started(event, services, run);
}

/** `GET /v1/runs/{runId}/export`: the run, its journal and its events as one JSON document (`stepwise replay --dir` replays such files). */
async function exported({ services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  return json(200, await exportRun(services, run));
}

/** An export is a whole run: more than a request's JSON, within what one Lambda call takes. */
const IMPORT_MAX_BODY_BYTES = 5 * 1024 * 1024;

/**
 * `POST /v1/runs/import`: an exported run (GET …/export, from this stack or another) recorded in
 * the caller's tenant as it ended, to replay here; 201 with the new run. A document that does not
 * fit is a 400 naming the problem, and nothing is recorded.
 */
async function imported({ event, services, tenantId }: Request): Promise<HttpResult> {
  const run = await importRun(services, tenantId, parseBody(event, ExportedRun, IMPORT_MAX_BODY_BYTES), linksFor(event, services));
  const links = run.links ?? runLinks(run.runId, run.executionArn, linksFor(event, services));
  return json(
    201,
    { runId: run.runId, sessionId: run.sessionId, status: run.status, importedFrom: run.importedFrom, links },
    { location: links.self },
  );
}

function started(event: Request["event"], services: Request["services"], run: Awaited<ReturnType<typeof replayRun>>): HttpResult {
  const links = run.links ?? runLinks(run.runId, run.executionArn, linksFor(event, services));
  return json(
    202,
    { runId: run.runId, sessionId: run.sessionId, status: run.status, replayOf: run.replayOf, forkOf: run.forkOf, links },
    { location: links.self },
  );
}

export const replayRoutes: Route[] = [
  { method: "POST", pattern: /^\/v1\/runs\/import$/, handle: imported, body: ExportedRun, maxBodyBytes: () => IMPORT_MAX_BODY_BYTES },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/replay$/, handle: replay, body: ReplayRunRequest },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/replay$/, handle: comparison },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/fork$/, handle: fork, body: ForkRunRequest },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/export$/, handle: exported },
];
