import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export interface McpHttpOptions {
  port?: number;
  /** The path the server answers on. */
  path?: string;
  /** Headers a request must carry (e.g. authorization), else 401. */
  requiredHeaders?: Record<string, string>;
  /** An HTTP status to answer a JSON-RPC request with instead of serving it (a key that expired, a quota), or undefined to serve it. */
  refuse?: (request: { method?: unknown }) => number | undefined;
}

export interface McpHttpServer {
  url: string;
  /** Every request's headers, in order (tests check what the client sent). */
  requests: IncomingMessage["headers"][];
  close(): Promise<void>;
}

/**
 * Serves an MCP server (the official SDK's McpServer) over Streamable HTTP on loopback, stateless:
 * a fresh server and transport per POST, as the SDK's stateless example does. For the README's
 * walk-through and the tests; not part of Stepwise itself.
 */
export async function serveMcpOverHttp(build: () => McpServer, options: McpHttpOptions = {}): Promise<McpHttpServer> {
  const path = options.path ?? "/mcp";
  const requests: IncomingMessage["headers"][] = [];
  const server: Server = createServer(async (req, res) => {
    requests.push(req.headers);
    if (new URL(req.url ?? "/", "http://localhost").pathname !== path) return void res.writeHead(404).end();
    for (const [name, value] of Object.entries(options.requiredHeaders ?? {})) {
      if (req.headers[name.toLowerCase()] !== value)
        return void res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
    }
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return void res.writeHead(400).end();
    }
    const refused = options.refuse?.(body as { method?: unknown });
    if (refused) return void res.writeHead(refused, { "content-type": "application/json" }).end(`{"error":"refused with ${refused}"}`);
    const mcp = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    try {
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return {
    url,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
