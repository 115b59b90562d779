import packageJson from "../package.json" with { type: "json" };
import { agentCardJson } from "../shared/protocols/a2a.js";
import { handleA2A } from "../shared/protocols/a2aServer.js";
import type { Services } from "../shared/services.js";
import { type HttpEvent, type HttpResult, json, type WebResult } from "./http.js";
import { linksFor } from "./links.js";
import { type ProtocolCall, protocolResult } from "./protocolCall.js";

/**
 * `/a2a` in a Lambda, as `/mcp` is: streamed from the stream function (message/stream and
 * resubscribe send each state as it comes), buffered behind API Gateway (a call follows its task
 * within the API's time limit, then answers with the task as it is).
 */
export function a2aResult(event: HttpEvent, services: Services, tenantId: string, options: ProtocolCall): Promise<WebResult> {
  return protocolResult(handleA2A, event, services, tenantId, options);
}

/** `GET /.well-known/agent-card.json`: public, like the card of any A2A agent; its endpoint is the stream's /a2a. */
export function agentCardResult(event: HttpEvent, services: Services): HttpResult {
  return json(200, agentCardJson(linksFor(event, services), packageJson.version), { "cache-control": "public, max-age=300" });
}
