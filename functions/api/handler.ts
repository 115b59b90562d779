import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { NotFoundError, StepwiseError } from "../../shared/errors.js";
import { logger } from "../../shared/observability.js";
import { bodyLimitOf, bodyTooLarge, MAX_JSON_BODY_BYTES } from "../bodyLimits.js";
import { preflight, withCors } from "../cors.js";
import { authenticate, errorResult, type HttpEvent, type HttpResult, header } from "../http.js";
import { logRequest, observability, requestLog } from "../observability.js";
import { getServices } from "../services.js";
import { validatePathParams } from "./params.js";
import { type Route, routes } from "./routes.js";

const METHODS = "GET, POST, DELETE";

/** The HTTP API: authenticate, route, validate, one call into shared/, shape the reply. */
export const handler = middy(async (event: HttpEvent, context: Context): Promise<HttpResult> => {
  const { cors } = getServices().settings;
  return preflight(event, cors, METHODS) ?? withCors(await route(event, context), event, cors);
})
  .use(observability(() => ({})))
  .use(requestLog());

async function route(event: HttpEvent, context: Context): Promise<HttpResult> {
  const admission = await admit(event);
  if ("denied" in admission) return admission.denied;
  try {
    const { found, params, tenantId } = admission;
    if (tenantId) logger.appendKeys({ tenant: tenantId });
    return await found.handle({ event, services: getServices(), tenantId, params, remainingMs: () => context.getRemainingTimeInMillis() });
  } catch (error) {
    return errorResult(error, event.requestContext?.requestId);
  }
}

type Admission = { denied: HttpResult } | { found: Route; params: Record<string, string>; tenantId: string; maxBodyBytes: number };

/**
 * What the request line and headers decide, before any body is read: the route and method, the
 * path parameters, the API key (unless the route is public) and the declared `Content-Length`
 * against the route's body limit.
 */
async function admit(event: HttpEvent): Promise<Admission> {
  try {
    const services = getServices();
    const path = event.rawPath.replace(/\/+$/, "") || "/";
    const matching = routes.map((route) => ({ route, match: route.pattern.exec(path) })).filter((m) => m.match);
    if (matching.length === 0) throw new NotFoundError(`No route for ${path}.`);
    const found = matching.find((m) => m.route.method === event.requestContext.http.method);
    if (!found) {
      const allow = [...new Set(matching.map((m) => m.route.method))].join(", ");
      const result = errorResult(
        new StepwiseError(`${event.requestContext.http.method} is not allowed on ${path}; use ${allow}.`, {
          statusCode: 405,
          code: "method_not_allowed",
        }),
      );
      return { denied: { ...result, headers: { ...result.headers, allow } } };
    }
    const params = validatePathParams(found.match?.groups);
    const tenantId = found.route.public ? "" : await authenticate(event, services);
    const maxBodyBytes = bodyLimitOf(found.route, services.settings.files.maxUploadBytes);
    if (Number(header(event, "content-length") ?? 0) > maxBodyBytes) throw bodyTooLarge(maxBodyBytes);
    return { found: found.route, params, tenantId, maxBodyBytes };
  } catch (error) {
    return { denied: errorResult(error, event.requestContext?.requestId) };
  }
}

/**
 * The handler's first step on a request's head alone, for an HTTP front end that has not read the
 * body yet (the local one): the answer that refuses the request (no key, no route, a declared
 * length over the limit), or how many body bytes to read at most, and the answer past them.
 * Nothing is read before the key is checked, and nothing past the route's limit.
 */
export async function admitHead(head: HttpEvent): Promise<{ denied: HttpResult } | { maxBodyBytes: number; tooLarge: HttpResult }> {
  const { cors } = getServices().settings;
  const startedAt = Date.now();
  const admission = preflight(head, cors, METHODS) ? { maxBodyBytes: MAX_JSON_BODY_BYTES } : await admit(head);
  if ("denied" in admission) {
    // Refused before the handler runs: its request line is logged here (a 401 shows, its key never does).
    logRequest(head, admission.denied, startedAt);
    return { denied: withCors(admission.denied, head, cors) };
  }
  return { maxBodyBytes: admission.maxBodyBytes, tooLarge: withCors(errorResult(bodyTooLarge(admission.maxBodyBytes)), head, cors) };
}
