import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import type { ErrorBody } from "../shared/contracts/api.js";
import { StepwiseError, UnauthorizedError } from "../shared/errors.js";
import { logger } from "../shared/observability.js";
import type { BaseServices } from "../shared/baseServices.js";

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
    const body: ErrorBody = { error: { code: error.code, message: error.message, ...(error.details !== undefined ? { details: error.details } : {}) } };
    return json(error.statusCode, body, error.statusCode === 401 ? { "www-authenticate": "Bearer" } : {});
  }
  logger.error("request failed", { requestId, error: error instanceof Error ? error : String(error) });
  const status = error instanceof StepwiseError ? error.statusCode : 500;
  const code = error instanceof StepwiseError ? error.code : "internal_error";
  return json(status, { error: { code, message: "Something went wrong on our side; the request can be retried.", details: { requestId } } } satisfies ErrorBody);
}

export function header(event: HttpEvent, name: string): string | undefined {
  return event.headers?.[name.toLowerCase()];
}

/** Bearer API key → tenant. */
export async function authenticate(event: HttpEvent, services: Pick<BaseServices, "apiKeys">): Promise<string> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header(event, "authorization") ?? "");
  if (!match) throw new UnauthorizedError();
  const tenant = await services.apiKeys.tenantOf(match[1]!);
  if (!tenant) throw new UnauthorizedError("The API key is not valid.");
  return tenant;
}

/** The public base URL the request came in on (API Gateway and Function URLs set these headers). */
export function baseUrl(event: HttpEvent): string {
  const proto = header(event, "x-forwarded-proto") ?? "https";
  return `${proto}://${event.requestContext.domainName}`;
}
