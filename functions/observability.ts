import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import type middy from "@middy/core";
import type { Context } from "aws-lambda";
import { loadOnce } from "../shared/lazyImport.js";
import { logger, metrics } from "../shared/observability.js";
import type { HttpEvent, HttpResult } from "./http.js";

/**
 * Powertools on every handler, as middy middlewares: an X-Ray segment, the Lambda context and the
 * invocation's own keys on every log line (runId, tenant, state, scope, requestId — whichever the
 * event names), and the metrics flushed as EMF when the invocation ends.
 */
export function observability<E>(keysOf: (event: E, context: Context) => Record<string, unknown>): middy.MiddlewareObj<E>[] {
  return [tracing(), injectLambdaContext(logger, { resetKeys: true }), invocationKeys(keysOf), flushMetrics()];
}

/**
 * Powertools' tracer (an X-Ray subsegment per invocation, the HTTP calls in it), loaded before the
 * first invocation runs rather than when the handler's code is imported: it brings the X-Ray SDK
 * (about 160 kB to read and compile), and it does nothing where X-Ray is off (outside Lambda).
 * Made then, it still instruments HTTP before the handler's first request.
 */
function tracing<E>(): middy.MiddlewareObj<E> {
  const capture = loadOnce(async () => {
    const [{ Tracer }, { captureLambdaHandler }] = await Promise.all([
      import("@aws-lambda-powertools/tracer"),
      import("@aws-lambda-powertools/tracer/middleware"),
    ]);
    return captureLambdaHandler(new Tracer({ serviceName: "stepwise" }), { captureResponse: false });
  });
  return {
    before: async (request) => (await capture()).before?.(request),
    after: async (request) => (await capture()).after?.(request),
    onError: async (request) => (await capture()).onError?.(request),
  };
}

function invocationKeys<E>(keysOf: (event: E, context: Context) => Record<string, unknown>): middy.MiddlewareObj<E> {
  return {
    before: (request) => {
      const keys = keysOf(request.event, request.context);
      logger.appendKeys(
        Object.fromEntries(Object.entries({ requestId: request.context?.awsRequestId, ...keys }).filter(([, v]) => v !== undefined)),
      );
    },
  };
}

/** Publishes what the invocation measured; nothing (not even a warning) when it measured nothing. */
function flushMetrics(): middy.MiddlewareObj {
  const publish = () => {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  };
  return { after: publish, onError: publish };
}

/** The run a request is about: from its path, or from the answer that created it. */
function runIdOf(event: HttpEvent, response?: HttpResult): string | undefined {
  const fromPath = /^\/v1\/runs\/([A-Za-z0-9_-]{1,80})(?:\/|$)/.exec(event.rawPath ?? "")?.[1];
  if (fromPath) return fromPath;
  if (typeof response?.body !== "string" || !response.body.startsWith("{")) return undefined;
  try {
    const runId = (JSON.parse(response.body) as { runId?: unknown }).runId;
    return typeof runId === "string" ? runId : undefined;
  } catch {
    return undefined;
  }
}

/** One line per HTTP request: method, path, status, ms, runId (the API and the stream, on AWS and locally). */
export function requestLog(): middy.MiddlewareObj<HttpEvent, HttpResult> {
  const started = new WeakMap<object, number>();
  return {
    before: (request) => {
      started.set(request, Date.now());
      logger.appendKeys({ requestId: request.event.requestContext?.requestId });
    },
    after: (request) => logRequest(request.event, request.response ?? undefined, started.get(request)),
  };
}

/** The request's line: method, path, status, time taken (never a header, so never a key). */
export function logRequest(event: HttpEvent, response: HttpResult | undefined, startedAt = Date.now()): void {
  logger.info("request", {
    method: event.requestContext?.http?.method,
    path: event.rawPath,
    status: response?.statusCode ?? 200,
    ms: Date.now() - startedAt,
    runId: runIdOf(event, response),
  });
}
