import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import type { ErrorBody } from "../shared/contracts/api.js";
import { StepwiseError, UnauthorizedError } from "../shared/errors.js";
import type { HandlerPorts } from "../shared/handlerPorts.js";
import { logger } from "../shared/observability.js";

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
    body: JSON.stringify(body),
  };
}

/** Caller mistakes show their message; our faults show a generic one and are logged whole. */
export function errorResult(error: unknown, requestId?: string): HttpResult {
  if (error instanceof StepwiseError && error.expose) {
    const body: ErrorBody = {
      error: { code: error.code, message: error.message, ...(error.details !== undefined ? { details: error.details } : {}) },
    };
    // A refusal that says when to come back (too many runs or streams, a spent budget) says it in Retry-After too.
    const retryAfter = (error as { retryAfterSeconds?: number }).retryAfterSeconds;
    return json(error.statusCode, body, {
      ...(error.statusCode === 401 ? { "www-authenticate": "Bearer" } : {}),
      ...(retryAfter !== undefined ? { "retry-after": String(retryAfter) } : {}),
    });
  }
  logger.error("request failed", { requestId, error: error instanceof Error ? error : String(error) });
  const status = error instanceof StepwiseError ? error.statusCode : 500;
  const code = error instanceof StepwiseError ? error.code : "internal_error";
  return json(status, {
    error: { code, message: "Something went wrong on our side; the request can be retried.", details: { requestId } },
  } satisfies ErrorBody);
}

export function header(event: HttpEvent, name: string): string | undefined {
  return event.headers?.[name.toLowerCase()];
}

/** Bearer API key → tenant. */
export async function authenticate(event: HttpEvent, services: Pick<HandlerPorts, "apiKeys">): Promise<string> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header(event, "authorization") ?? "");
  if (!match) throw new UnauthorizedError();
  const tenant = await services.apiKeys.tenantOf(match[1]);
  if (!tenant) throw new UnauthorizedError("The API key is not valid.");
  return tenant;
}

/** The public base URL the request came in on (API Gateway and Function URLs set these headers). */
export function baseUrl(event: HttpEvent): string {
  const proto = header(event, "x-forwarded-proto") ?? "https";
  return `${proto}://${event.requestContext.domainName}`;
}

/** A handler's result whose body may stream (the stream function's) or is whole (the API's). */
export type WebResult = { statusCode: number; headers: Record<string, string>; body: string | Readable };

/** The event as a web Request, for the protocol SDKs that speak fetch's types. */
export function toWebRequest(event: HttpEvent): Request {
  const query = event.rawQueryString ? `?${event.rawQueryString}` : "";
  const method = event.requestContext.http.method;
  const body =
    event.body === undefined || ["GET", "HEAD"].includes(method)
      ? undefined
      : Buffer.from(event.body, event.isBase64Encoded ? "base64" : "utf8");
  return new Request(`${baseUrl(event)}${event.rawPath}${query}`, { method, headers: event.headers as Record<string, string>, body });
}

/** A web Response as the function's result: streamed as it is written, or read whole. */
export async function fromWebResponse(response: Response, streaming: boolean): Promise<WebResult> {
  const headers = Object.fromEntries(response.headers);
  const body = streaming && response.body ? Readable.fromWeb(response.body as NodeReadableStream) : await response.text();
  return { statusCode: response.status, headers, body };
}
