// An HTTP proxy in front of an OpenAI-compatible model server (the offline model): it keeps every
// chat completion request (so tests can audit what each agent was told) and can make chosen calls
// fail the ways real providers fail: 429, 500, 503, a hang, an HTML page with 200, a malformed
// event stream, a stream cut off half-way.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export const FAULTS = ["429", "500", "503", "hang", "html", "malformed", "cut"] as const;
/**
 * Besides those: "refuse" drops the connection before any answer (a model that cannot be reached);
 * "cut-late" sends half the reply, waits a second (clients see the partial text), then drops.
 */
export type Fault = (typeof FAULTS)[number] | "refuse" | "cut-late";

export type Role = "router" | "planner" | "executor" | "react" | "summarizer" | "writer" | "title" | "unknown";

export interface ProxiedRequest {
  role: Role;
  /** The request body as the client sent it. */
  body: any;
  fault?: Fault;
}

export interface ModelProxy {
  /** Base URL for the `openai` client: http://127.0.0.1:PORT/v1 */
  url: string;
  /** Every chat completion request, in arrival order (failed ones and retries included). */
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

/** Which agent sent a request: its system prompt's first line says ("You are the planner of Stepwise…"). */
export function roleOf(body: { messages?: { role: string; content?: unknown }[] }): Role {
  const system = body.messages?.find((m) => m.role === "system")?.content;
  const text = typeof system === "string" ? system : "";
  if (text.startsWith("You are the router")) return "router";
  if (text.startsWith("You are the planner")) return "planner";
  if (text.startsWith("You are an executor")) return "executor";
  if (text.startsWith("You are the summarizer")) return "summarizer";
  if (text.startsWith("You are Stepwise, an AI agent")) return "react";
  // write_report's model call, when a report is written from a task and its material.
  if (text.startsWith("You are a report writer")) return "writer";
  // The session title's call, after a session's first answered turn (shared/steps/sessionTitle.ts).
  if (text.startsWith("You name conversations")) return "title";
  return "unknown";
}

/**
 * `fault(i, request)` decides what happens to the i-th request (0-based); undefined passes it on.
 * It may answer with a promise: the request waits for it (a test holds chosen calls until it has
 * seen what it needs, instead of hoping a slow model leaves it time enough).
 */
export async function startModelProxy(
  target: string,
  fault: (index: number, request: ProxiedRequest) => Fault | undefined | Promise<Fault | undefined> = () => undefined,
): Promise<ModelProxy> {
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const path = (req.url ?? "/").replace(/^\/v1/, "");
    if (req.method !== "POST" || !path.startsWith("/chat/completions")) return forward(req.method ?? "GET", path, raw, res);
    const body = JSON.parse(raw);
    const request: ProxiedRequest = { role: roleOf(body), body };
    const index = requests.push(request) - 1;
    request.fault = await fault(index, request);
    switch (request.fault) {
      case "429":
        return error(res, 429, "Rate limit reached for requests", { "retry-after-ms": "100" });
      case "500":
        return error(res, 500, "The server had an error while processing your request.");
      case "503":
        return error(res, 503, "The engine is currently overloaded, please try again later.");
      case "hang":
        return; // no headers, no body: the client's timeout ends it
      case "html":
        res.writeHead(200, { "content-type": "text/html" });
        return void res.end("<html><body><h1>502 Bad Gateway</h1><p>upstream unavailable</p></body></html>");
      case "malformed":
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: {"id":"chatcmpl-x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n`);
        return void res.end('data: {"id": "chatcmpl-x", "choices": [{"delta": {"content": "lo\n\n');
      case "refuse":
        return void req.socket.destroy();
      case "cut":
      case "cut-late": {
        const upstream = await fetch(`${target}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: raw });
        const text = await upstream.text();
        res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "text/event-stream" });
        // Half the events (whole ones, for cut-late), then the connection drops.
        const half = text.slice(0, Math.floor(text.length / 2));
        res.write(request.fault === "cut" ? half : half.slice(0, half.lastIndexOf("\n\n") + 2));
        return void setTimeout(() => res.socket?.destroy(), request.fault === "cut" ? 20 : 1000);
      }
      default:
        return forward("POST", path, raw, res);
    }
  }

  async function forward(method: string, path: string, raw: string, res: ServerResponse): Promise<void> {
    const upstream = await fetch(`${target}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: method === "POST" ? raw : undefined,
    });
    res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
    // Chunk by chunk, as the model sent it: a streamed reply stays streamed.
    if (upstream.body) for await (const chunk of upstream.body) res.write(chunk);
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function error(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ error: { message, type: status === 429 ? "rate_limit_error" : "server_error", param: null, code: null } }));
}
