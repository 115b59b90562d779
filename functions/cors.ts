import type { Settings } from "../shared/settings.js";
import { type HttpEvent, type HttpResult, header } from "./http.js";

type CorsSettings = Settings["cors"];

/**
 * CORS for the API and the stream, from CORS_ALLOWED_ORIGINS (comma-separated origins, or "*").
 * The console is served from the API's own origin and needs none; the default allows no other.
 * The stream, on another origin on AWS (its Function URL), also allows the console's (CONSOLE_ORIGIN).
 */
export function allowedOrigin(event: HttpEvent, cors: CorsSettings): string | undefined {
  const origin = header(event, "origin");
  if (!origin) return undefined;
  const allowed = [...cors.allowedOrigins.split(","), cors.consoleOrigin ?? ""].map((o) => o.trim().replace(/\/$/, "")).filter(Boolean);
  if (allowed.includes("*")) return "*";
  return allowed.includes(origin) ? origin : undefined;
}

const ALLOW_HEADERS =
  "authorization, content-type, idempotency-key, last-event-id, mcp-session-id, mcp-protocol-version, a2a-version, a2a-extensions";
const EXPOSE_HEADERS = "location, retry-after, idempotent-replayed, mcp-session-id";

/** The answer to a preflight (OPTIONS with Access-Control-Request-Method), or undefined for any other request. */
export function preflight(event: HttpEvent, cors: CorsSettings, methods: string): HttpResult | undefined {
  if (event.requestContext.http.method !== "OPTIONS" || !header(event, "access-control-request-method")) return undefined;
  const origin = allowedOrigin(event, cors);
  return {
    statusCode: 204,
    headers: {
      vary: "Origin",
      ...(origin
        ? {
            "access-control-allow-origin": origin,
            "access-control-allow-methods": methods,
            "access-control-allow-headers": ALLOW_HEADERS,
            "access-control-max-age": "600",
          }
        : {}),
    },
    body: "",
  };
}

/** Adds the CORS headers an allowed origin needs to a result. */
export function withCors<T extends { headers?: Record<string, string | number | boolean> }>(
  result: T,
  event: HttpEvent,
  cors: CorsSettings,
): T {
  const origin = allowedOrigin(event, cors);
  if (!origin) return result;
  return {
    ...result,
    headers: { ...result.headers, "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSE_HEADERS, vary: "Origin" },
  };
}
