import packageJson from "../package.json" with { type: "json" };
import type { ProtocolContext } from "../shared/protocols/context.js";
import type { Services } from "../shared/services.js";
import { fromWebResponse, type HttpEvent, toWebRequest, type WebResult } from "./http.js";
import { linksFor } from "./links.js";

/** Time kept back from the Lambda's own limit to answer "still running" before it is cut off. */
export const ANSWER_MARGIN_MS = 5_000;

/** How the function serving a protocol call answers: streamed or buffered, and the time it has left. */
export interface ProtocolCall {
  streaming: boolean;
  remainingMs: number;
}

/**
 * One call of an agent protocol's web handler (MCP, A2A) in a Lambda: the event as a web Request,
 * the handler's Response back as the function's result, a call following its run no longer than
 * the stream's window (streamed) or the function's time less a margin (buffered).
 */
export async function protocolResult(
  handle: (request: Request, context: ProtocolContext) => Promise<Response>,
  event: HttpEvent,
  services: Services,
  tenantId: string,
  options: ProtocolCall,
): Promise<WebResult> {
  const cap = options.streaming ? services.settings.stream.maxSeconds * 1000 : Number.POSITIVE_INFINITY;
  const response = await handle(toWebRequest(event), {
    services,
    tenantId,
    links: linksFor(event, services),
    streaming: options.streaming,
    waitMs: Math.max(0, Math.min(cap, options.remainingMs - ANSWER_MARGIN_MS)),
    version: packageJson.version,
  });
  return fromWebResponse(response, options.streaming);
}
