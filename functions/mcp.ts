import type { DoorPorts } from "../shared/handlerPorts.js";
import { handleMcp } from "../shared/protocols/mcp.js";
import type { HttpEvent, WebResult } from "./http.js";
import { type ProtocolCall, protocolResult } from "./protocolCall.js";

/**
 * `/mcp` in a Lambda: the event as a web Request, the MCP server's Response back as the function's
 * result. Streamed (the stream function) the body goes out as it is written, so progress and
 * elicitation reach the client while a call waits; buffered (behind API Gateway) a call answers
 * within the API's time limit.
 */
export function mcpResult(event: HttpEvent, services: DoorPorts, tenantId: string, options: ProtocolCall): Promise<WebResult> {
  return protocolResult(handleMcp, event, services, tenantId, options);
}
