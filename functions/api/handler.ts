import middy from "@middy/core";
import { NotFoundError, StepwiseError } from "../../shared/errors.js";
import { logger } from "../../shared/observability.js";
import { authenticate, errorResult, type HttpEvent, type HttpResult } from "../http.js";
import { observability, requestLog } from "../observability.js";
import { getServices } from "../services.js";
import { validatePathParams } from "./params.js";
import { routes } from "./routes.js";
import { preflight, withCors } from "../cors.js";

/** The HTTP API: authenticate, route, validate, one call into shared/, shape the reply. */
export const handler = middy(async (event: HttpEvent): Promise<HttpResult> => {
  const { config } = getServices();
  return preflight(event, config, "GET, POST, DELETE") ?? withCors(await route(event), event, config);
})
  .use(observability(() => ({})))
  .use(requestLog());

async function route(event: HttpEvent): Promise<HttpResult> {
  try {
    const services = getServices();
    const path = event.rawPath.replace(/\/+$/, "") || "/";
    const matching = routes.map((route) => ({ route, match: route.pattern.exec(path) })).filter((m) => m.match);
    if (matching.length === 0) throw new NotFoundError(`No route for ${path}.`);
    const found = matching.find((m) => m.route.method === event.requestContext.http.method);
    if (!found) {
      const allow = [...new Set(matching.map((m) => m.route.method))].join(", ");
      const result = errorResult(new StepwiseError(`${event.requestContext.http.method} is not allowed on ${path}; use ${allow}.`, { statusCode: 405, code: "method_not_allowed" }));
      return { ...result, headers: { ...result.headers, allow } };
    }
    const params = validatePathParams(found.match!.groups);
    const tenantId = found.route.public ? "" : await authenticate(event, services);
    if (tenantId) logger.appendKeys({ tenant: tenantId });
    return await found.route.handle({ event, services, tenantId, params });
  } catch (error) {
    return errorResult(error, event.requestContext?.requestId);
  }
}
