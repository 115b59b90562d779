import type { DoorPorts } from "../shared/handlerPorts.js";
import type { HttpEvent, WebResult } from "./http.js";
import { type ProtocolCall, protocolResult } from "./protocolCall.js";

/**
 * `/mcp` in a Lambda: the event as a web Request, the MCP server's Response back as the function's
 * result. Streamed (the stream function) the body goes out as it is written, so progress and
 * elicitation reach the client while a call waits; buffered (behind API Gateway) a call answers
 * within the API's time limit. The MCP server (and its SDK) loads on the first call, not with the
 * function: the API's other routes never need it.
 */
export async function mcpResult(event: HttpEvent, services: DoorPorts, tenantId: string, options: ProtocolCall): Promise<WebResult> {
  const mcp = await import("../shared/protocols/mcp.js");
  return protocolResult(mcp.handleMcp, event, services, tenantId, options);
}
