// The offline model served as an OpenAI-compatible HTTP server on 127.0.0.1.

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { respond } from "./brain.js";
import { moderate } from "./guardrails.js";
import {
  type ApiError,
  type ChatCompletionRequest,
  completionBody,
  invalidRequest,
  MODEL_ID,
  modelList,
  parseCompletionRequest,
  streamChunks,
  usageOf,
} from "./protocol.js";

export interface OfflineModelOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Waited before answering each completion, to simulate a model and let parallel callers overlap. */
  latencyMs?: number;
}

export interface OfflineModel {
  /** Base URL for the `openai` client, e.g. http://127.0.0.1:PORT/v1 */
  url: string;
  close(): Promise<void>;
}

export async function startOfflineModel(options: OfflineModelOptions = {}): Promise<OfflineModel> {
  const latencyMs = options.latencyMs ?? 0;
  const server = createServer((req, res) => {
    handle(req, res, latencyMs).catch((error: unknown) => failUnexpectedly(res, error));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, close: () => closeServer(server) };
}

async function handle(req: IncomingMessage, res: ServerResponse, latencyMs: number): Promise<void> {
  const path = new URL(req.url ?? "/", "http://localhost").pathname.replace(/\/+$/, "");
  if (req.method === "GET" && path === "/v1/models") return sendJson(res, 200, modelList(nowSeconds()));
  if (req.method === "POST" && path === "/v1/chat/completions") return completeChat(req, res, latencyMs);
  if (req.method === "POST" && path === "/v1/moderations") return moderateText(req, res);
  sendJson(res, 404, invalidRequest(`Invalid URL (${req.method} ${req.url})`));
}

async function completeChat(req: IncomingMessage, res: ServerResponse, latencyMs: number): Promise<void> {
  const body = parseJson(await readBody(req));
  if (body === undefined) {
    return sendJson(res, 400, invalidRequest("We could not parse the JSON body of your request. Expected valid JSON."));
  }
  const parsed = parseCompletionRequest(body);
  if ("error" in parsed) return sendJson(res, 400, parsed.error);
  if (latencyMs > 0) await delay(latencyMs);
  answer(res, parsed.request);
}

async function moderateText(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = parseJson(await readBody(req));
  if (body === undefined) {
    return sendJson(res, 400, invalidRequest("We could not parse the JSON body of your request. Expected valid JSON."));
  }
  const answer = moderate(body, `modr-${randomUUID().replaceAll("-", "")}`);
  sendJson(res, answer.status, answer.body);
}

function answer(res: ServerResponse, request: ChatCompletionRequest): void {
  const reply = respond({ messages: request.messages, tools: request.tools });
  const usage = usageOf(request.messages, reply);
  const meta = { id: `chatcmpl-${randomUUID().replaceAll("-", "")}`, created: nowSeconds(), model: request.model ?? MODEL_ID };
  if (!request.stream) {
    sendJson(res, 200, completionBody(meta, reply, usage));
    return;
  }
  const includeUsage = request.stream_options?.include_usage === true;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  for (const chunk of streamChunks(meta, reply, includeUsage ? usage : undefined)) {
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  res.end("data: [DONE]\n\n");
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function sendJson(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function failUnexpectedly(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body: ApiError = {
    error: { message: `The offline model failed: ${String(error)}`, type: "server_error", param: null, code: null },
  };
  sendJson(res, 500, body);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Clients keep connections alive; without this, close() would wait for them to time out.
    server.closeAllConnections();
  });
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
