import { ownRun } from "../../shared/run/access.js";
import { runSpans } from "../../shared/run/runTrace.js";
import { otlpJson } from "../../shared/views/genAiTrace.js";
import { type HttpResult, json } from "../http.js";
import type { Request, Route } from "./routes.js";

/**
 * `GET /v1/runs/{runId}/trace`: the run as OpenTelemetry GenAI spans in OTLP's JSON encoding (an
 * ExportTraceServiceRequest), ready to POST to any OTLP/HTTP endpoint's /v1/traces.
 */
async function trace({ services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  return json(200, otlpJson(await runSpans(services, run)));
}

export const traceRoutes: Route[] = [{ method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/trace$/, handle: trace }];
