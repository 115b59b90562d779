import packageJson from "../package.json" with { type: "json" };
import { agentCardJson } from "../shared/protocols/a2a.js";
import { handleA2A } from "../shared/protocols/a2aServer.js";
import type { Services } from "../shared/services.js";
import { linksFor } from "./api/access.js";
import { fromWebResponse, json, toWebRequest, type HttpEvent, type HttpResult, type WebResult } from "./http.js";
import { ANSWER_MARGIN_MS } from "./mcp.js";

/**
 * `/a2a` in a Lambda, as `/mcp` is: streamed from the stream function (message/stream and
 * resubscribe send each state as it comes), buffered behind API Gateway (a call follows its task
 * within the API's time limit, then answers with the task as it is).
 */
export async function a2aResult(event: HttpEvent, services: Services, tenantId: string, options: { streaming: boolean; remainingMs: number }): Promise<WebResult> {
  const cap = options.streaming ? services.config.STREAM_MAX_SECONDS * 1000 : Infinity;
  const response = await handleA2A(toWebRequest(event), {
    services,
    tenantId,
    links: linksFor(event, services),
    streaming: options.streaming,
    waitMs: Math.max(0, Math.min(cap, options.remainingMs - ANSWER_MARGIN_MS)),
    version: packageJson.version,
  });
  return fromWebResponse(response, options.streaming);
}

/** `GET /.well-known/agent-card.json`: public, like the card of any A2A agent; its endpoint is the stream's /a2a. */
export function agentCardResult(event: HttpEvent, services: Services): HttpResult {
  return json(200, agentCardJson(linksFor(event, services), packageJson.version), { "cache-control": "public, max-age=300" });
}
