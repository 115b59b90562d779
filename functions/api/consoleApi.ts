import { RunsQuery, SessionsQuery } from "../../shared/contracts/listings.js";
import type { RunRecord } from "../../shared/contracts/run.js";
import type { DoorPorts } from "../../shared/handlerPorts.js";
import { estimatedCostUsd } from "../../shared/views/cost.js";
import { runHeadline } from "../../shared/views/runView.js";
import { consoleAsset } from "../console/assets.js";
import { type HttpResult, json } from "../http.js";
import { parseQuery } from "../jsonBody.js";
import { health } from "./health.js";
import { ownRun, type Request, type Route } from "./routes.js";

/** Routes the console, the CLI and other clients need beyond runs themselves: listings, stream tokens, health, the API description, the console. */
export const consoleApiRoutes: Route[] = [
  { method: "GET", pattern: /^\/v1\/runs$/, handle: listRuns, query: RunsQuery },
  { method: "GET", pattern: /^\/v1\/sessions$/, handle: listSessions, query: SessionsQuery },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/stream-token$/, handle: createStreamToken },
  { method: "GET", pattern: /^\/health$/, handle: health, public: true },
  // The API's description is built from every schema, with the module that writes it, on the first request for it.
  { method: "GET", pattern: /^\/v1\/openapi\.json$/, handle: async () => (await import("./openapi.js")).openApiDocument(), public: true },
  { method: "GET", pattern: /^\/$/, handle: consoleAsset, public: true },
  { method: "GET", pattern: /^\/index\.html$/, handle: consoleAsset, public: true },
  { method: "GET", pattern: /^\/console\.js$/, handle: consoleAsset, public: true },
  { method: "GET", pattern: /^\/console\.css$/, handle: consoleAsset, public: true },
  { method: "GET", pattern: /^\/favicon\.(svg|ico)$/, handle: consoleAsset, public: true },
];

/** One line per run in `GET /v1/runs`: enough for a list, the rest is at `GET /v1/runs/{id}`. */
export function runSummary(run: RunRecord, services: DoorPorts) {
  return {
    ...runHeadline(run),
    input: run.input.length > 200 ? `${run.input.slice(0, 199)}…` : run.input,
    usage: { ...run.usage, ...(run.stateTransitions !== undefined ? { stateTransitions: run.stateTransitions } : {}) },
    estimatedCostUsd: estimatedCostUsd(run.usage, run.stateTransitions, services.settings),
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    endedAt: run.endedAt ?? null,
    ...(run.title ? { title: run.title } : {}),
  };
}

async function listRuns({ event, services, tenantId }: Request): Promise<HttpResult> {
  const query = parseQuery(event, RunsQuery);
  const page = await services.listings.runs(tenantId, query);
  return json(200, { runs: page.items.map((run) => runSummary(run, services)), nextCursor: page.nextCursor ?? null });
}

async function listSessions({ event, services, tenantId }: Request): Promise<HttpResult> {
  const query = parseQuery(event, SessionsQuery);
  const page = await services.listings.sessions(tenantId, query);
  return json(200, { sessions: page.items, nextCursor: page.nextCursor ?? null });
}

/** A token that opens this run's stream for a few minutes, for EventSource (no headers) — never the API key in a URL. */
async function createStreamToken({ services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  const grant = await services.streamTokens.issue({ tenantId, runId: run.runId }, services.settings.stream.tokenSeconds);
  return json(201, grant);
}
