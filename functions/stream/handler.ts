import { Readable } from "node:stream";
import middy from "@middy/core";
import * as z from "zod";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { RunRecord } from "../../shared/contracts/run.js";
import { BadRequestError, NotFoundError, StepwiseError, UnauthorizedError } from "../../shared/errors.js";
import type { DoorPorts } from "../../shared/handlerPorts.js";
import { logger } from "../../shared/observability.js";
import { AgUiRequestedRun, AgUiView, agUiFrames, createRunFromAgUi, parseAgUiCursor, resumeFromAgUi } from "../../shared/protocols/agUi.js";
import { runEventFrames, type StreamEnd } from "../../shared/protocols/sse.js";
import { acceptRun } from "../../shared/run/acceptRun.js";
import { type OpenStream, openStream } from "../../shared/run/openStreams.js";
import { a2aResult } from "../a2a.js";
import { preflight, withCors } from "../cors.js";
import { authenticate, errorResult, type HttpEvent, header } from "../http.js";
import { parseBody as parseJsonBody } from "../jsonBody.js";
import { linksFor } from "../links.js";
import { mcpResult } from "../mcp.js";
import { observability, requestLog } from "../observability.js";
import { secretsPort, toolsPort } from "../toolPorts.js";
import { HANDLER_USES } from "../uses.js";
import { wire } from "../wiring.js";

const Cursor = z.coerce.number().int().min(0);

/** The stream function's ports (functions/uses.ts), each built when a request first needs it. */
const ports = wire(HANDLER_USES.Stream, { tools: toolsPort, secrets: secretsPort });

/**
 * `GET /v1/runs/{id}/stream` on the streaming Function URL: the run's events as Server-Sent Events;
 * and `/mcp` and `/a2a`, the MCP server and the A2A agent, where their replies can stream.
 * A streamed Lambda is not told when its client leaves, so every stream ends by itself after
 * STREAM_MAX_SECONDS and the client resumes with Last-Event-ID.
 */
export const handler = middy<HttpEvent, unknown>({ streamifyResponse: true })
  .handler(async (event, context) => {
    try {
      // MCP's Streamable HTTP: POST a message, GET the server's stream, DELETE the session.
      if (/^\/mcp\/?$/.test(event.rawPath)) return await protocolCall(mcpResult, event, context, "GET, POST, DELETE");
      if (/^\/a2a\/?$/.test(event.rawPath)) return await protocolCall(a2aResult, event, context, "POST");
      if (/^\/v1\/ag-ui\/?$/.test(event.rawPath)) return await agUiRun(event, context);
      const services = ports;
      const match = /^\/v1\/runs\/([A-Za-z0-9_-]{1,80})\/stream\/?$/.exec(event.rawPath);
      if (!match) throw new NotFoundError(`No stream at ${event.rawPath}; streams are at /v1/runs/{runId}/stream.`);
      const early = preflight(event, services.settings.cors, "GET");
      if (early) return early;
      if (event.requestContext.http.method !== "GET") throw new NotFoundError("Streams are read with GET.");
      const tenantId = await streamReader(event, services, match[1]);
      logger.appendKeys({ tenant: tenantId, runId: match[1] });
      const run = await services.runs.get(match[1]);
      if (!run || run.tenantId !== tenantId) throw new NotFoundError(`No run with id ${match[1]}.`);

      const rawCursor = header(event, "last-event-id") ?? event.queryStringParameters?.after ?? "0";
      const agUi = wantsAgUi(event);
      const agUiCursor = agUi ? parseAgUiCursor(rawCursor) : undefined;
      const cursor = agUi ? { success: agUiCursor !== undefined, data: 0 } : Cursor.safeParse(rawCursor);
      if (!cursor.success)
        throw new BadRequestError(
          `Last-Event-ID / after must be an event sequence number${agUi ? " (<seq>.<index> in the AG-UI view)" : ""}, got '${rawCursor}'.`,
        );
      // The AG-UI view is rebuilt from the log's start, then written from where the client stopped.
      const view = agUi ? new AgUiView(run.sessionId, run.runId) : undefined;
      const frame = view && agUiCursor ? (logEvent: RunEvent) => agUiFrames(view, logEvent, agUiCursor) : undefined;

      return eventStream(event, services, await openStream(services, tenantId), run, cursor.data, frame, context);
    } catch (error) {
      return withCors(errorResult(error, event.requestContext?.requestId), event, ports.settings.cors);
    }
  })
  .use(observability(() => ({})))
  .use(requestLog());

type LambdaContext = { getRemainingTimeInMillis?: () => number } | undefined;

/**
 * The run's log from `after` on as an SSE response, each event written by `frame` (default: the
 * native frame). The stream's place among the tenant's open streams is given back when the body
 * closes: at its end, at an error, or when the client leaves.
 */
function eventStream(
  event: HttpEvent,
  services: DoorPorts,
  stream: OpenStream,
  run: RunRecord,
  after: number,
  frame: ((logEvent: RunEvent) => string) | undefined,
  context: LambdaContext,
  done?: () => boolean,
) {
  const { settings } = services;
  const remaining = context?.getRemainingTimeInMillis?.() ?? Number.POSITIVE_INFINITY;
  const controller = new AbortController();
  const started = Date.now();
  let ending: StreamEnd = "client disconnected";
  async function* frames() {
    ending = yield* runEventFrames(services, run.runId, after, {
      pollMs: settings.stream.pollMs,
      heartbeatMs: settings.stream.heartbeatMs,
      maxMs: Math.min(settings.stream.maxSeconds * 1000, remaining - 10_000),
      signal: controller.signal,
      frame,
      done,
    });
  }
  const body = Readable.from(frames());
  // Where a closed connection is visible, stop polling at once.
  body.once("close", () => {
    controller.abort();
    void stream.release();
    logger.info("stream ended", { runId: run.runId, reason: ending, seconds: (Date.now() - started) / 1000 });
  });
  return withCors(
    {
      statusCode: 200,
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" },
      body,
    },
    event,
    settings.cors,
  );
}

/**
 * `POST /v1/ag-ui`: what an AG-UI `HttpAgent` runs against. The RunAgentInput's thread is the
 * session, its last user message the task (`forwardedProps.mode` picks the mode). The answer is one
 * AG-UI run, streamed, under the input's run id: up to the run's end or its first pause for a
 * person (the interrupt outcome). The thread's next input answers the pause with `resume` entries
 * and gets the AG-UI run after it. The Stepwise run id is in `X-Stepwise-Run`: its whole AG-UI view
 * resumes with `GET /v1/runs/{id}/stream?protocol=ag-ui` and Last-Event-ID.
 */
async function agUiRun(event: HttpEvent, context: LambdaContext) {
  const services = ports;
  const early = preflight(event, services.settings.cors, "POST");
  if (early) return early;
  if (event.requestContext.http.method !== "POST")
    throw new StepwiseError("Start an AG-UI run with POST.", { statusCode: 405, code: "method_not_allowed" });
  const tenantId = await authenticate(event, services);
  logger.appendKeys({ tenant: tenantId });
  // AG-UI's schemas load with the first AG-UI request: they hold the whole of zod (its locales too), 0.6 MB to
  // compile, shipped apart in the bundle (STREAM_BUNDLING) so a cold start does not read them.
  const { RunAgentInputSchema } = await import("@ag-ui/core/schemas");
  const input = parseJsonBody(event, RunAgentInputSchema);
  // The stream's place is taken before anything is decided or started for it: a refused request changes nothing.
  const stream = await openStream(services, tenantId);
  let run: RunRecord;
  let resumed: Awaited<ReturnType<typeof resumeFromAgUi>> | undefined;
  try {
    resumed = input.resume?.length ? await resumeFromAgUi(services, tenantId, input.threadId, input.resume) : undefined;
    const ignored = resumed?.ignored ?? (input.resume ?? []).map((e) => e.interruptId);
    if (ignored.length > 0) logger.warn("AG-UI resume entries answering no interrupt of the thread were left out", { ignored });
    if (resumed?.run) run = resumed.run;
    else {
      const { request, fieldName } = createRunFromAgUi(input);
      run = (await acceptRun(services, tenantId, request, { links: linksFor(event, services), fieldName })).run;
    }
  } catch (error) {
    await stream.release();
    throw error;
  }
  const requested = new AgUiRequestedRun(new AgUiView(run.sessionId, run.runId), input.runId, resumed?.continues);
  const result = eventStream(
    event,
    services,
    stream,
    run,
    0,
    (logEvent) => requested.frames(logEvent),
    context,
    () => requested.done,
  );
  return { ...result, headers: { ...result.headers, "x-stepwise-run": run.runId } };
}

/** The AG-UI view when the client asks for it: `?protocol=ag-ui`, or an Accept naming AG-UI's media type. */
function wantsAgUi(event: HttpEvent): boolean {
  return event.queryStringParameters?.protocol === "ag-ui" || /application\/vnd\.ag-ui\b/i.test(header(event, "accept") ?? "");
}

/**
 * `/mcp` and `/a2a` streamed: MCP's progress notifications and elicitation, A2A's message/stream and
 * resubscribe, reach the client as they come while a call follows its run.
 */
async function protocolCall(result: typeof mcpResult, event: HttpEvent, context: LambdaContext, methods: string) {
  const services = ports;
  const early = preflight(event, services.settings.cors, methods);
  if (early) return early;
  const tenantId = await authenticate(event, services);
  logger.appendKeys({ tenant: tenantId });
  return withCors(
    await result(event, services, tenantId, {
      streaming: true,
      remainingMs: context?.getRemainingTimeInMillis?.() ?? Number.POSITIVE_INFINITY,
    }),
    event,
    services.settings.cors,
  );
}

/**
 * Who reads the stream: a stream token (`?token=`, for browsers) opens only the run it was issued
 * for; otherwise the API key in the Authorization header.
 */
async function streamReader(event: HttpEvent, services: DoorPorts, runId: string): Promise<string> {
  const token = event.queryStringParameters?.token;
  if (token === undefined) return authenticate(event, services);
  const grant = await services.streamTokens.verify(token);
  if (!grant) throw new UnauthorizedError("The stream token is not valid or has expired; ask for a new one.");
  if (grant.runId !== runId) throw new NotFoundError(`No run with id ${runId}.`);
  return grant.tenantId;
}
