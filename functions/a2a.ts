import packageJson from "../package.json" with { type: "json" };
import type { DoorPorts } from "../shared/handlerPorts.js";
import { type HttpEvent, type HttpResult, json, type WebResult } from "./http.js";
import { linksFor } from "./links.js";
import { type ProtocolCall, protocolResult } from "./protocolCall.js";

/**
 * `/a2a` in a Lambda, as `/mcp` is: streamed from the stream function (message/stream and
 * resubscribe send each state as it comes), buffered behind API Gateway (a call follows its task
 * within the API's time limit, then answers with the task as it is). The A2A server loads on the
 * first call, not with the function.
 */
export async function a2aResult(event: HttpEvent, services: DoorPorts, tenantId: string, options: ProtocolCall): Promise<WebResult> {
  const a2a = await import("../shared/protocols/a2aServer.js");
  return protocolResult(a2a.handleA2A, event, services, tenantId, options);
}

/**
 * `GET /.well-known/agent-card.json`: public, like the card of any A2A agent; its endpoint is the
 * stream's /a2a. The A2A SDK that writes it loads with the first request for it.
 */
export async function agentCardResult(event: HttpEvent, services: DoorPorts): Promise<HttpResult> {
  const a2a = await import("../shared/protocols/a2a.js");
  return json(200, a2a.agentCardJson(linksFor(event, services), packageJson.version), { "cache-control": "public, max-age=300" });
}
