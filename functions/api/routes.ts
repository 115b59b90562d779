import type * as z from "zod";
import { decidePause } from "../../shared/agent/decide.js";
import { CreateRunRequest, EventsQuery, Id, TenantSettings } from "../../shared/contracts/api.js";
import { ResolveInterruptRequest } from "../../shared/contracts/interrupts.js";
import type { RunRecord } from "../../shared/contracts/run.js";
import { assertLowersOnly } from "../../shared/contracts/tenantCeilings.js";
import { TERMINAL_STATUSES } from "../../shared/contracts/terminal.js";
import { CreateToolSourceRequest, ToolSourceName, toolSourceView } from "../../shared/contracts/toolSources.js";
import { BadRequestError, ConflictError, NotFoundError } from "../../shared/errors.js";
import type { DoorPorts, HandlerPorts } from "../../shared/handlerPorts.js";
import { acceptRun } from "../../shared/run/acceptRun.js";
import { ownRun, ownRunSnapshot } from "../../shared/run/access.js";
import { cancelRun } from "../../shared/run/cancel.js";
import { forksOf } from "../../shared/run/replay.js";
import { recordStateTransitions } from "../../shared/run/stateTransitions.js";
import { deleteToolSource, registerToolSource } from "../../shared/tools/mcp/sources.js";
import { estimatedCostUsd } from "../../shared/views/cost.js";
import { interruptView, runLinks, runView } from "../../shared/views/runView.js";
import { a2aResult, agentCardResult } from "../a2a.js";
import { a2aMaxBodyBytes } from "../bodyLimits.js";
import { baseUrl, type HttpEvent, type HttpResult, header, json } from "../http.js";
import { parseBody, parseQuery } from "../jsonBody.js";
import { linksFor } from "../links.js";
import { mcpResult } from "../mcp.js";
import { agentRoutes } from "./agents.js";
import { consoleApiRoutes } from "./consoleApi.js";
import { fileRoutes } from "./files.js";
import { policyRoutes } from "./policies.js";
import { replayRoutes } from "./replay.js";
import { resumeRoutes } from "./resume.js";
import { taskRoutes } from "./tasks.js";
import { traceRoutes } from "./trace.js";

export { linksFor, ownRun };

export interface Request {
  event: HttpEvent;
  /** The API's ports (functions/uses.ts): the doors', the cipher for tool sources, the table for the health probe. */
  services: DoorPorts & Pick<HandlerPorts, "secrets" | "table">;
  tenantId: string;
  params: Record<string, string>;
  /** The function's time left before Lambda ends the invocation (its context's getRemainingTimeInMillis). */
  remainingMs: () => number;
}

/**
 * One route: method, path pattern (named groups are path parameters, validated by name in
 * params.ts), handler, and the zod contracts of its body and query when it has them (the fuzz test
 * generates requests from those). `public` routes answer without an API key (health, the OpenAPI
 * document, the console). `maxBodyBytes`: the longest body the route takes, when not a JSON body's
 * (functions/bodyLimits.ts); longer ones are refused before they are read.
 */
export type Route = {
  method: string;
  pattern: RegExp;
  handle: (request: Request) => Promise<HttpResult>;
  body?: z.ZodType;
  query?: z.ZodType;
  public?: boolean;
  maxBodyBytes?: (maxUploadBytes: number) => number;
};

export const routes: Route[] = [
  { method: "POST", pattern: /^\/v1\/runs$/, handle: createRun, body: CreateRunRequest },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)$/, handle: getRun },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/events$/, handle: listEvents, query: EventsQuery },
  {
    method: "POST",
    pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/interrupts\/(?<interruptId>[^/]+)$/,
    handle: resolveInterrupt,
    body: ResolveInterruptRequest,
  },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/cancel$/, handle: cancel },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/webhooks$/, handle: listWebhooks },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/webhooks\/(?<deliveryId>[^/]+)\/redeliver$/, handle: redeliver },
  { method: "GET", pattern: /^\/v1\/sessions\/(?<sessionId>[^/]+)$/, handle: getSession },
  { method: "DELETE", pattern: /^\/v1\/sessions\/(?<sessionId>[^/]+)$/, handle: deleteSession },
  { method: "GET", pattern: /^\/v1\/tools$/, handle: listTools },
  { method: "GET", pattern: /^\/v1\/settings$/, handle: getSettings },
  { method: "PUT", pattern: /^\/v1\/settings$/, handle: putSettings, body: TenantSettings },
  { method: "POST", pattern: /^\/v1\/tool-sources$/, handle: createToolSource },
  { method: "GET", pattern: /^\/v1\/tool-sources$/, handle: listToolSources },
  { method: "GET", pattern: /^\/v1\/tool-sources\/(?<name>[^/]+)$/, handle: getToolSource },
  { method: "DELETE", pattern: /^\/v1\/tool-sources\/(?<name>[^/]+)$/, handle: removeToolSource },
  { method: "GET", pattern: /^\/v1\/webhook-secrets$/, handle: webhookSecrets },
  { method: "POST", pattern: /^\/v1\/webhook-secrets\/rotate$/, handle: rotateWebhookSecret },
  { method: "POST", pattern: /^\/mcp$/, handle: mcp },
  { method: "POST", pattern: /^\/a2a$/, handle: a2a, maxBodyBytes: a2aMaxBodyBytes },
  {
    method: "GET",
    pattern: /^\/\.well-known\/agent-card\.json$/,
    handle: async ({ event, services }) => agentCardResult(event, services),
    public: true,
  },
  ...resumeRoutes,
  ...replayRoutes,
  ...traceRoutes,
  ...agentRoutes,
  ...policyRoutes,
  ...fileRoutes,
  ...taskRoutes,
  ...consoleApiRoutes,
];

async function createRun({ event, services, tenantId }: Request): Promise<HttpResult> {
  const idempotencyKey = header(event, "idempotency-key");
  if (idempotencyKey !== undefined && !/^[\x21-\x7e]{1,255}$/.test(idempotencyKey)) {
    throw new BadRequestError("Idempotency-Key must be 1 to 255 visible ASCII characters.");
  }
  const body = parseBody(event, CreateRunRequest);
  const { run, replayed } = await acceptRun(services, tenantId, body, { links: linksFor(event, services), idempotencyKey });
  const links = run.links ?? runLinks(run.runId, run.executionArn, linksFor(event, services));
  return json(
    202,
    { runId: run.runId, sessionId: run.sessionId, status: run.status, links },
    { location: links.self, ...(replayed ? { "idempotent-replayed": "true" } : {}) },
  );
}

/** API Gateway's 30 s for the whole request, less room for a cold start (the stream URL's calls wait longer). */
const API_GATEWAY_BUDGET_MS = 25_000;

/** A buffered `/mcp` or `/a2a` call answers within API Gateway's time and the function's, whichever ends first. */
const bufferedCall = (request: Request) => ({ streaming: false, remainingMs: Math.min(API_GATEWAY_BUDGET_MS, request.remainingMs()) });

async function mcp(request: Request): Promise<HttpResult> {
  return (await mcpResult(request.event, request.services, request.tenantId, bufferedCall(request))) as HttpResult;
}

async function a2a(request: Request): Promise<HttpResult> {
  return (await a2aResult(request.event, request.services, request.tenantId, bufferedCall(request))) as HttpResult;
}

async function cancel({ services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  await cancelRun(services, run, "Cancelled through the API.");
  return json(202, { runId: run.runId, status: "cancelled" });
}

async function listWebhooks({ services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  const deliveries = await services.webhooks.listDeliveries(run.runId);
  return json(200, {
    runId: run.runId,
    webhook: run.webhook ? shownWebhook(run.webhook) : null,
    deliveries: deliveries.map(({ body: _body, ...d }) => d),
  });
}

/** The subscription as people see it: an A2A push config's token and credentials are secrets of the receiver, shown as ***. */
function shownWebhook({ a2a, ...webhook }: NonNullable<RunRecord["webhook"]>) {
  if (!a2a) return webhook;
  const { token, authentication, ...config } = a2a;
  return {
    ...webhook,
    a2a: {
      ...config,
      ...(token ? { token: "***" } : {}),
      ...(authentication ? { authentication: { scheme: authentication.scheme, credentials: "***" } } : {}),
    },
  };
}

async function redeliver({ services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  const delivery = await services.webhooks.getDelivery(run.runId, params.deliveryId);
  if (!delivery) throw new NotFoundError(`No webhook delivery ${params.deliveryId} on run ${run.runId}.`);
  if (delivery.status === "pending") throw new ConflictError("This delivery is still being attempted.", { status: delivery.status });
  // Redelivering to an endpoint that answered 410 is the way to turn it back on.
  if (delivery.status === "disabled") await services.webhooks.enable(tenantId, delivery.url);
  const attempt = await services.webhooks.reopen(delivery);
  await services.notifyQueue.send({ kind: "deliver", runId: run.runId, deliveryId: delivery.deliveryId, attempt });
  return json(202, { deliveryId: delivery.deliveryId, status: "pending" });
}

async function getSession({ services, tenantId, params }: Request): Promise<HttpResult> {
  const sessionId = validSessionId(params.sessionId);
  const [messages, runs, title] = await Promise.all([
    services.sessions.messages(tenantId, sessionId),
    services.sessions.runs(tenantId, sessionId),
    services.sessions.title(tenantId, sessionId),
  ]);
  if (messages.length === 0 && !runs.activeRunId) throw new NotFoundError(`No session with id ${sessionId}.`);
  return json(200, { sessionId, title: title ?? null, activeRunId: runs.activeRunId ?? null, waitingRunIds: runs.waiting, messages });
}

async function deleteSession({ services, tenantId, params }: Request): Promise<HttpResult> {
  const sessionId = validSessionId(params.sessionId);
  const { activeRunId } = await services.sessions.runs(tenantId, sessionId);
  // Its runs in flight and waiting would lose their place: they end first.
  if (activeRunId)
    throw new ConflictError(`Session ${sessionId} has a run in flight (${activeRunId}); cancel it or wait for it to end.`, { activeRunId });
  if (!(await services.sessions.delete(tenantId, sessionId))) throw new NotFoundError(`No session with id ${sessionId}.`);
  return { statusCode: 204, headers: { "cache-control": "no-store" }, body: "" };
}

function validSessionId(sessionId: string): string {
  if (!Id.safeParse(sessionId).success) throw new NotFoundError(`No session with id ${sessionId}.`);
  return sessionId;
}

/** The tools agents can use: built-ins and each source's, with JSON schema, source and read or write. */
async function listTools({ services, tenantId }: Request): Promise<HttpResult> {
  const registry = await services.tools.registryFor(tenantId);
  const tools = registry.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    source: tool.source ?? "builtin",
    access: tool.access,
    asksUser: tool.asksUser ?? false,
    parameters: registry.schemaOf(tool),
  }));
  return json(200, { tools });
}

async function createToolSource({ event, services, tenantId }: Request): Promise<HttpResult> {
  const source = await registerToolSource(services, tenantId, parseBody(event, CreateToolSourceRequest));
  return json(201, source, { location: `${baseUrl(event)}/v1/tool-sources/${source.name}` });
}

async function listToolSources({ services, tenantId }: Request): Promise<HttpResult> {
  return json(200, { sources: (await services.toolSources.list(tenantId)).map(toolSourceView) });
}

async function getToolSource({ services, tenantId, params }: Request): Promise<HttpResult> {
  const source = ToolSourceName.safeParse(params.name).success ? await services.toolSources.get(tenantId, params.name) : undefined;
  if (!source) throw new NotFoundError(`No tool source named ${params.name}.`);
  return json(200, toolSourceView(source));
}

async function removeToolSource({ services, tenantId, params }: Request): Promise<HttpResult> {
  if (!ToolSourceName.safeParse(params.name).success) throw new NotFoundError(`No tool source named ${params.name}.`);
  await deleteToolSource(services, tenantId, params.name);
  return { statusCode: 204, headers: { "cache-control": "no-store" }, body: "" };
}

async function getSettings({ services, tenantId }: Request): Promise<HttpResult> {
  return json(200, { multitask: "reject", ...(await services.tenantSettings.get(tenantId)) });
}

/** The fields sent replace the tenant's; the others stay ("" removes the instructions). */
async function putSettings({ event, services, tenantId }: Request): Promise<HttpResult> {
  const sent = parseBody(event, TenantSettings);
  // A value stored under a higher ceiling is left alone (the lower one applies); a new one must fit.
  assertLowersOnly(sent, {
    maxSandboxes: services.settings.sandbox.maxPerTenant,
    maxOpenStreams: services.settings.limits.maxOpenStreamsPerTenant,
  });
  const { instructions, ...settings } = { ...(await services.tenantSettings.get(tenantId)), ...sent };
  const kept = { ...settings, ...(instructions ? { instructions } : {}) };
  await services.tenantSettings.put(tenantId, kept);
  return json(200, { multitask: "reject", ...kept });
}

async function webhookSecrets({ services, tenantId }: Request): Promise<HttpResult> {
  return json(200, { secrets: await services.webhooks.secrets(tenantId) });
}

async function rotateWebhookSecret({ services, tenantId }: Request): Promise<HttpResult> {
  return json(200, { secrets: await services.webhooks.rotate(tenantId, services.settings.webhooks.secretOverlapHours) });
}

async function getRun({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const { run, tasks, files, interrupts } = await ownRunSnapshot(services, tenantId, params.runId);
  const [transitions, forks] = await Promise.all([stateTransitionsOf(services, run), forksOf(services, run)]);
  return json(200, {
    ...runView(run, tasks, files, interrupts, linksFor(event, services), transitions, forks),
    estimatedCostUsd: estimatedCostUsd(run.usage, transitions, services.settings),
  });
}

async function listEvents({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  const query = parseQuery(event, EventsQuery);
  const events = await services.events.list(run.runId, query.after, query.limit);
  const last = events.at(-1)?.seq ?? query.after;
  return json(200, { runId: run.runId, events, next: { after: last } });
}

async function resolveInterrupt({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  const body = parseBody(event, ResolveInterruptRequest);
  const interrupt = await decidePause(services, tenantId, run, params.interruptId, body);
  return json(202, interruptView(interrupt));
}

/**
 * The notifier counts a run's transitions when its execution ends (best effort: GetExecutionHistory
 * allows 20 calls/s per account). Only when it has not, a minute after the end, is the count taken
 * here from the execution history, then kept on the run: one count per run, not one per reader.
 */
const NOTIFIER_COUNTS_WITHIN_MS = 60_000;
async function stateTransitionsOf(services: DoorPorts, run: RunRecord): Promise<number | undefined> {
  if (run.stateTransitions !== undefined || !TERMINAL_STATUSES.has(run.status)) return run.stateTransitions;
  if (!run.endedAt || Date.now() - Date.parse(run.endedAt) < NOTIFIER_COUNTS_WITHIN_MS) return undefined;
  return recordStateTransitions(services, run.runId, run.executionArn);
}
