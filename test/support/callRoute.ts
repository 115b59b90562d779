import type { Request, Route } from "../../functions/api/routes.js";
import type { HttpEvent } from "../../functions/http.js";

/** A route's answer as a client reads it: the status, the headers and the parsed JSON body (an error's as the API sends it). */
export interface RouteAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/**
 * Calls the route of `routes` that matches the method and path, with `services` (the in-memory
 * ports) as its ports, as the API's handler does after the key check; a thrown StepwiseError is
 * answered as the handler answers it (its status, and `{ error: { code, message, details } }`).
 */
export async function callRoute(
  routes: Route[],
  services: unknown,
  request: { method: string; path: string; body?: unknown; headers?: Record<string, string>; tenantId?: string },
): Promise<RouteAnswer> {
  const route = routes.find((r) => r.method === request.method && r.pattern.test(request.path));
  if (!route) throw new Error(`no route for ${request.method} ${request.path}`);
  const event = {
    rawPath: request.path,
    headers: { ...(request.body === undefined ? {} : { "content-type": "application/json" }), ...request.headers },
    body: request.body === undefined ? undefined : typeof request.body === "string" ? request.body : JSON.stringify(request.body),
    requestContext: { domainName: "api.test", http: { method: request.method } },
  } as unknown as HttpEvent;
  const params = route.pattern.exec(request.path)!.groups ?? {};
  try {
    const res = await route.handle({
      event,
      services,
      tenantId: request.tenantId ?? "tenant_1",
      params,
      remainingMs: () => 30_000,
    } as unknown as Request);
    return {
      status: res.statusCode ?? 200,
      headers: (res.headers ?? {}) as Record<string, string>,
      body: res.body ? JSON.parse(String(res.body)) : undefined,
    };
  } catch (error) {
    const e = error as { statusCode?: number; code?: string; message: string; details?: unknown };
    if (e.statusCode === undefined) throw error;
    return { status: e.statusCode, headers: {}, body: { error: { code: e.code, message: e.message, details: e.details } } };
  }
}
