import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool as McpToolDefinition } from "@modelcontextprotocol/sdk/types.js";
import { BadRequestError, UnprocessableError } from "../../errors.js";
import { assertDeliverableUrl, type HostLookup, WebhookUrlError } from "../../net/ssrfGuard.js";
import { pinnedFetch } from "./pinnedFetch.js";

export type { CallToolResult, McpToolDefinition };

/** Where an MCP server is and what to send it; header values are secrets (decrypted for this call only). */
export interface McpEndpoint {
  url: string;
  headers: Record<string, string>;
}

export interface McpNetworkPolicy {
  /** Local development and tests reach servers on 127.0.0.0/8 and ::1 (never on AWS). */
  allowLoopback: boolean;
  allowHttp: boolean;
  lookup?: HostLookup;
}

const CLIENT_INFO = { name: "stepwise", version: "0.1.0" };
/** At most this many pages of tools/list: a server that pages forever does not hold a run. */
const MAX_LIST_PAGES = 20;

/**
 * The SDK's client, loaded when a connection is opened (the module system keeps it after the first):
 * the agents of a tenant with no tool source never load it.
 */
async function mcpClientSdk() {
  const [{ Client }, { SSEClientTransport }, { StreamableHTTPClientTransport, StreamableHTTPError }] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/sse.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  ]);
  /** The HTTP status of a failed Streamable HTTP request, if that is what failed. */
  const statusOf = (error: unknown) => (error instanceof StreamableHTTPError ? error.code : undefined);
  return { Client, SSEClientTransport, StreamableHTTPClientTransport, statusOf };
}

/**
 * Opens an MCP session: Streamable HTTP first; a server that answers its POST with a 4xx is an
 * older HTTP+SSE server (the spec's backwards-compatibility rule), so try that transport next.
 * Every connection goes only to addresses the SSRF guard vetted.
 */
async function connectMcp(endpoint: McpEndpoint, policy: McpNetworkPolicy, timeoutMs: number): Promise<Client> {
  // The guard speaks of webhooks; a source left out of a run gives its reason in its own words.
  const addresses = await assertDeliverableUrl(endpoint.url, policy).catch((error: unknown) => {
    throw error instanceof WebhookUrlError ? toolSourceUrlError(error) : error;
  });
  const { Client, SSEClientTransport, StreamableHTTPClientTransport, statusOf } = await mcpClientSdk();
  const url = new URL(endpoint.url);
  const options = { requestInit: { headers: endpoint.headers, redirect: "manual" as const }, fetch: pinnedFetch(addresses) };
  const client = new Client(CLIENT_INFO);
  let first: unknown;
  try {
    await client.connect(new StreamableHTTPClientTransport(url, options), { timeout: timeoutMs });
    return client;
  } catch (error) {
    await client.close().catch(() => undefined);
    const status = statusOf(error);
    if (!isOlderServerAnswer(status)) throw withStatus(error, status);
    first = withStatus(error, status);
  }
  const legacy = new Client(CLIENT_INFO);
  try {
    await legacy.connect(new SSEClientTransport(url, options), { timeout: timeoutMs });
    return legacy;
  } catch (error) {
    await legacy.close().catch(() => undefined);
    throw new Error(`${(first as Error).message}; the HTTP+SSE transport failed too: ${(error as Error).message}`);
  }
}

/** The SDK's message leaves the HTTP status out; a person fixing the source needs it (and `status` says it to the code). */
function withStatus(error: unknown, status: number | undefined): unknown {
  return status !== undefined
    ? Object.assign(new Error(`HTTP ${status}: ${(error as Error).message}`, { cause: error }), { status })
    : error;
}

/** The HTTP status an MCP server answered with, on an error of connectMcp or withMcp. */
export function mcpStatusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | undefined)?.status;
  return typeof status === "number" ? status : undefined;
}

/** A 4xx to the first POST, other than one about credentials or rate: maybe an HTTP+SSE server. */
function isOlderServerAnswer(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && ![401, 403, 429].includes(status);
}

/** Runs `fn` on a fresh session and always closes it: nothing stays open in a frozen Lambda. */
export async function withMcp<T>(
  endpoint: McpEndpoint,
  policy: McpNetworkPolicy,
  timeoutMs: number,
  fn: (client: Client) => Promise<T>,
): Promise<T> {
  const client = await connectMcp(endpoint, policy, timeoutMs);
  try {
    return await fn(client);
  } catch (error) {
    // A request of the session refused (a key that expired since the connection, a quota): say its status.
    throw withStatus(error, (await mcpClientSdk()).statusOf(error));
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Every tool the server offers (tools/list, all pages). */
export async function listMcpTools(client: Client, timeoutMs: number): Promise<McpToolDefinition[]> {
  const tools: McpToolDefinition[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = await client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

export interface McpCallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Sent in `_meta`, the same on every attempt of one call: a server may use it to do the work once. */
  idempotencyKey: string;
}

/** tools/call with the per-call timeout. */
export async function callMcpTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: McpCallOptions,
): Promise<CallToolResult> {
  const result = await client.callTool({ name, arguments: args, _meta: { idempotencyKey: options.idempotencyKey } }, undefined, {
    timeout: options.timeoutMs,
    signal: options.signal,
  });
  // Servers of the 2024-10-07 protocol may answer with `toolResult`; keep it as text.
  return "content" in result ? (result as CallToolResult) : { content: [{ type: "text", text: JSON.stringify(result.toolResult) }] };
}

/** The SSRF guard's refusal, in words about tool sources: a bad URL is 400, a forbidden or unreachable target 422. */
export function toolSourceUrlError(error: WebhookUrlError) {
  const message = error.message
    .replace(/webhook (URL|host)/g, "tool source $1")
    .replace("authenticate with the webhook signature", "send credentials in 'headers'");
  if (error.code === "invalid_webhook_url") return new BadRequestError(message, undefined, "invalid_tool_source_url");
  if (error.code === "forbidden_webhook_address") return new UnprocessableError(message, "forbidden_tool_source_address");
  return new UnprocessableError(message, "tool_source_unreachable");
}
