// A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, for tests: each request gets
// the next step of a script (a reply, an error, a hang, raw chunks) and every request body is kept,
// so tests can drive the real `openai` client through exact situations and inspect what it sent.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageFunctionToolCall,
} from "openai/resources/chat/completions";

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** Pause between streamed chunks (after the headers, before each chunk). */
interface Paced {
  slowMs?: number;
  /** Nothing is streamed until this settles: a model thinking until the test lets it answer. */
  heldUntil?: Promise<unknown>;
}

/** A normal reply: text (a string streams a word at a time, a list one delta per item), tool calls, or both. */
export interface ReplyStep extends Paced {
  text?: string | string[];
  toolCalls?: { name: string; arguments: object | string; id?: string }[];
  /** Defaults to an estimate of about four characters per token. */
  usage?: ScriptedUsage;
}

/** An OpenAI-shaped error; `retryAfter` (seconds) is sent as `retry-after` and `retry-after-ms`. */
export interface ErrorStep {
  status: number;
  retryAfter?: number;
  message?: string;
}

/** Never answers (no headers, no body), for timeouts and aborts. */
export interface HangStep {
  hang: true;
}

/** This exact text as the message content, in one delta (a model breaking the JSON contract). */
export interface MalformedStep extends Paced {
  malformed: string;
  usage?: ScriptedUsage;
}

/** These exact chunks, streamed as given (then `[DONE]`); streaming requests only. */
export interface ChunksStep extends Paced {
  chunks: ChatCompletionChunk[];
}

/** This exact body with status 200 (an HTML page, broken events); with `drop`, the connection is then cut instead of ended. */
export interface RawStep {
  raw: string;
  contentType?: string;
  drop?: boolean;
}

export type ScriptStep = ReplyStep | ErrorStep | HangStep | MalformedStep | ChunksStep | RawStep;

/** A request body as the client sent it. */
export type ScriptedRequest = ChatCompletionCreateParamsBase;

/**
 * A list gives request i (0-based) step i; a request past its end gets a 400 (not retried by the
 * client), so a test that makes more calls than it scripted fails loudly.
 */
export type Script = ScriptStep[] | ((request: ScriptedRequest, index: number) => ScriptStep);

export interface ScriptedModel {
  /** Base URL for the `openai` client: http://127.0.0.1:PORT/v1 */
  url: string;
  /** Every POST /v1/chat/completions body received, in arrival order (retries included). */
  requests: ScriptedRequest[];
  /** When each request arrived and when its reply was complete (epoch ms), by request index. */
  timings: { receivedAt: number; repliedAt?: number }[];
  /** The most requests that were being answered at the same moment. */
  maxInFlight(): number;
  close(): Promise<void>;
}

export interface ScriptedModelOptions {
  /** Every request waits this long before its reply starts (a model's fixed thinking time). */
  latencyMs?: number;
}

export async function startScriptedModel(script: Script, options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const requests: ScriptedRequest[] = [];
  const timings: ScriptedModel["timings"] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else sendError(res, 500, `scripted model failed: ${String(error)}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://localhost").pathname.replace(/\/+$/, "");
    if (req.method !== "POST" || path !== "/v1/chat/completions") return sendError(res, 404, `Invalid URL (${req.method} ${req.url})`);
    let body: ScriptedRequest;
    try {
      body = JSON.parse(await readBody(req)) as ScriptedRequest;
    } catch {
      return sendError(res, 400, "We could not parse the JSON body of your request. Expected valid JSON.");
    }
    const index = requests.push(body) - 1;
    timings[index] = { receivedAt: Date.now() };
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    try {
      const step = typeof script === "function" ? script(body, index) : script[index];
      if (!step) return sendError(res, 400, `The script has ${requests.length - 1} step(s); request #${index + 1} has none.`);
      if (options.latencyMs) await delay(options.latencyMs);
      await play(step, body, index, res);
    } finally {
      inFlight--;
      timings[index]!.repliedAt = Date.now();
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    timings,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Ends kept-alive and hanging connections, which would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}

async function play(step: ScriptStep, request: ScriptedRequest, index: number, res: ServerResponse): Promise<void> {
  if ("hang" in step) return;
  if ("raw" in step) {
    res.writeHead(200, { "content-type": step.contentType ?? "text/event-stream" });
    if (!step.drop) return void res.end(step.raw);
    res.write(step.raw);
    return void setTimeout(() => res.destroy(), 10);
  }
  if ("status" in step) {
    const headers: Record<string, string> = {};
    if (step.retryAfter !== undefined) {
      headers["retry-after"] = String(step.retryAfter);
      headers["retry-after-ms"] = String(Math.round(step.retryAfter * 1000));
    }
    return sendError(res, step.status, step.message, headers);
  }

  const meta = { id: `chatcmpl-scripted-${index}`, created: Math.floor(Date.now() / 1000), model: request.model || "scripted" };
  if ("chunks" in step) {
    if (!request.stream) return sendError(res, 400, "A `chunks` step needs a streaming request.");
    return stream(res, step.chunks, step);
  }

  const reply = asReply(step);
  const deltas = typeof reply.text === "string" ? reply.text.split(/(?<=\s)(?=\S)/) : (reply.text ?? []);
  const content = reply.text === undefined ? null : deltas.join("");
  const toolCalls: ChatCompletionMessageFunctionToolCall[] = (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_${index}_${i}`,
    type: "function",
    function: { name: call.name, arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments) },
  }));
  const finishReason = toolCalls.length ? "tool_calls" : "stop";
  const usage = withTotal(
    reply.usage ?? {
      prompt_tokens: estimateTokens(JSON.stringify(request.messages)),
      completion_tokens: estimateTokens((content ?? "") + toolCalls.map((c) => c.function.name + c.function.arguments).join("")),
    },
  );

  if (!request.stream) {
    const completion: ChatCompletion = {
      ...meta,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content, refusal: null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
          finish_reason: finishReason,
          logprobs: null,
        },
      ],
      usage,
    };
    return sendJson(res, 200, completion);
  }

  // Shaped like OpenAI's stream: a role chunk, content deltas, each call's id and name then its
  // arguments in pieces, a finish chunk, and (when asked for) a usage chunk with no choices.
  const includeUsage = request.stream_options?.include_usage === true;
  const chunk = (
    delta: ChatCompletionChunk.Choice.Delta,
    finish: ChatCompletionChunk.Choice["finish_reason"] = null,
  ): ChatCompletionChunk => ({
    ...meta,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const chunks = [
    chunk({ role: "assistant", content: toolCalls.length && content === null ? null : "" }),
    ...deltas.filter(Boolean).map((text) => chunk({ content: text })),
    ...toolCalls.flatMap((call, i) => [
      chunk({ tool_calls: [{ index: i, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }),
      ...pieces(call.function.arguments, 8).map((part) => chunk({ tool_calls: [{ index: i, function: { arguments: part } }] })),
    ]),
    chunk({}, finishReason),
    ...(includeUsage ? [{ ...meta, object: "chat.completion.chunk" as const, choices: [], usage }] : []),
  ];
  return stream(res, chunks, reply);
}

/** A malformed step is a reply whose text is that one delta, paced and counted like any other. */
function asReply(step: ReplyStep | MalformedStep): ReplyStep {
  if (!("malformed" in step)) return step;
  const { malformed, ...paced } = step;
  return { ...paced, text: [malformed] };
}

async function stream(res: ServerResponse, chunks: ChatCompletionChunk[], { slowMs = 0, heldUntil }: Paced): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  await heldUntil;
  for (const chunk of chunks) {
    if (slowMs > 0) await delay(slowMs);
    if (res.destroyed) return; // the client went away (abort, timeout)
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  if (slowMs > 0) await delay(slowMs);
  if (!res.destroyed) res.end("data: [DONE]\n\n");
}

/** OpenAI's error body for a status. */
function sendError(res: ServerResponse, status: number, message?: string, headers: Record<string, string> = {}): void {
  const [type, code] =
    status === 429
      ? ["requests", "rate_limit_exceeded"]
      : status >= 500
        ? ["server_error", null]
        : status === 401
          ? ["invalid_request_error", "invalid_api_key"]
          : ["invalid_request_error", null];
  const defaults: Record<number, string> = {
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request. Sorry about that!",
  };
  sendJson(res, status, { error: { message: message ?? defaults[status] ?? `HTTP ${status}`, type, param: null, code } }, headers);
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function withTotal(usage: ScriptedUsage) {
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}
