import type { RunEvent } from "../../shared/contracts/events.js";
import { settingsFor } from "../../shared/llm/roleSettings.js";
import { ownRun } from "../../shared/run/access.js";
import { genAiSpans, otlpJson } from "../../shared/views/genAiTrace.js";
import { type HttpResult, json } from "../http.js";
import type { Request, Route } from "./routes.js";

/** Events read per page, and at most this many pages: a trace of the longest run stays one answer. */
const PAGE = 1_000;
const MAX_PAGES = 100;

/**
 * `GET /v1/runs/{runId}/trace`: the run as OpenTelemetry GenAI spans in OTLP's JSON encoding (an
 * ExportTraceServiceRequest), ready to POST to any OTLP/HTTP endpoint's /v1/traces.
 */
async function trace({ services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  const events: RunEvent[] = [];
  for (let page = 0, after = 0; page < MAX_PAGES; page++) {
    const got = await services.events.list(run.runId, after, PAGE);
    events.push(...got);
    if (got.length < PAGE) break;
    after = got.at(-1)?.seq ?? after;
  }
  const { model } = services.settings;
  const spans = genAiSpans(run, events, { modelOf: (role) => settingsFor(role, model.roles).model ?? model.name });
  return json(200, otlpJson(spans));
}

export const traceRoutes: Route[] = [{ method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/trace$/, handle: trace }];
