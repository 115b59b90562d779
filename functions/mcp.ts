import packageJson from "../package.json" with { type: "json" };
import { handleMcp } from "../shared/protocols/mcp.js";
import type { Services } from "../shared/services.js";
import { linksFor } from "./api/access.js";
import { fromWebResponse, toWebRequest, type HttpEvent, type WebResult } from "./http.js";

/** Time kept back from the Lambda's own limit to answer "still running" before it is cut off. */
export const ANSWER_MARGIN_MS = 5_000;

/**
 * `/mcp` in a Lambda: the event as a web Request, the MCP server's Response back as the function's
 * result. Streamed (the stream function) the body goes out as it is written, so progress and
 * elicitation reach the client while a call waits; buffered (behind API Gateway) a call answers
 * within the API's time limit.
 */
export async function mcpResult(event: HttpEvent, services: Services, tenantId: string, options: { streaming: boolean; remainingMs: number }): Promise<WebResult> {
  const cap = options.streaming ? services.config.STREAM_MAX_SECONDS * 1000 : Infinity;
  const response = await handleMcp(toWebRequest(event), {
    services,
    tenantId,
    links: linksFor(event, services),
    streaming: options.streaming,
    waitMs: Math.max(0, Math.min(cap, options.remainingMs - ANSWER_MARGIN_MS)),
    version: packageJson.version,
  });
  return fromWebResponse(response, options.streaming);
}
