// A provider stand-in that refuses what real providers refuse. It sits in front of any
// OpenAI-compatible server (the offline model, a scripted model) and checks every chat completion
// request the way OpenAI and DeepSeek do before they answer: the context window
// (`context_length_exceeded`), the tool cap (128 on OpenAI), an output limit above the model's
// maximum, tool calls without their tool messages (and tool messages without a call), and, for
// DeepSeek V4 in thinking mode, assistant tool-call turns sent back without their
// `reasoning_content`. A refused request gets the provider's 400 and never reaches the server
// behind. An accepted reply is streamed on, with DeepSeek's reasoning added, and cut where the
// provider would cut it: at the output limit, with `finish_reason: "length"`.
//
// Tokens are counted as the project counts them (shared/memory/tokens.ts, js-tiktoken), so the
// window a test configures is the window Stepwise must fit into.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createParser } from "eventsource-parser";
import { getEncoding, type Tiktoken } from "js-tiktoken";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ChatMessage } from "../../shared/llm/types.js";
import { encodingForModel, tokenCounterFor } from "../../shared/memory/tokens.js";

/**
 * Whose rules the stand-in applies (and whose error wording it answers with). "deepseek-reasoner"
 * is DeepSeek's earlier reasoning model: it streams reasoning and refuses a request that sends
 * `reasoning_content` back (its docs give the 400, not the wording).
 */
export type ProviderKind = "openai" | "deepseek-v4" | "deepseek-reasoner";

export interface ProviderLimits {
  kind?: ProviderKind;
  /** The model's context window: prompt tokens plus the requested output limit must fit. Default 128,000. */
  windowTokens?: number;
  /**
   * The most output tokens the model writes: a larger `max_tokens` / `max_completion_tokens` is
   * refused, and every reply is cut here (or at the request's own smaller limit). Default 16,384.
   */
  maxOutputTokens?: number;
  /** The most tools one request may carry. Default 128. */
  maxTools?: number;
  /** The model name whose tokenizer counts (see encodingForModel). Default "gpt-4o". */
  tokenizerModel?: string;
}

/** A provider's error answer: the status and OpenAI's `{ error: { message, type, param, code } }` body. */
export interface Refusal {
  status: number;
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface StrictRequest {
  /** The request body as the client sent it. */
  body: any;
  /** Why it was refused, if it was. */
  refusal?: Refusal;
  /** Whether its reply was cut at the output limit (`finish_reason: "length"`). */
  cut?: boolean;
  /** The reasoning the stand-in streamed with the reply (DeepSeek V4 in thinking mode). */
  reasoning?: string;
}

export interface StrictProvider {
  /** Base URL for the `openai` client: http://127.0.0.1:PORT/v1 */
  url: string;
  /** Every chat completion request, in arrival order, refused ones included. */
  requests: StrictRequest[];
  /** The refused requests' answers, in order. */
  refusals(): Refusal[];
  close(): Promise<void>;
}

const DEFAULTS = { kind: "openai", windowTokens: 128_000, maxOutputTokens: 16_384, maxTools: 128, tokenizerModel: "gpt-4o" } as const;

/** DeepSeek's own wording for a tool-call turn sent back without its reasoning. */
export const REASONING_NOT_PASSED_BACK = "The reasoning_content in the thinking mode must be passed back to the API.";

function refusal(message: string, param: string | null, code: string | null, type = "invalid_request_error"): Refusal {
  return { status: 400, error: { message, type, param, code } };
}

/** Whether DeepSeek's thinking mode is on for this request: it is by default, `thinking: {type: "disabled"}` turns it off. */
export function thinkingOn(body: any, limits: ProviderLimits): boolean {
  const kind = limits.kind ?? DEFAULTS.kind;
  return kind === "deepseek-reasoner" || (kind === "deepseek-v4" && body?.thinking?.type !== "disabled");
}

/** What the provider answers a request with before writing a token, or undefined when it accepts it. */
export function refusalOf(body: any, limits: ProviderLimits = {}): Refusal | undefined {
  const kind = limits.kind ?? DEFAULTS.kind;
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];

  const maxTools = limits.maxTools ?? DEFAULTS.maxTools;
  if (tools.length > maxTools) {
    return refusal(
      `Invalid 'tools': array too long. Expected an array with maximum length ${maxTools}, but got an array with length ${tools.length} instead.`,
      "tools",
      "array_above_max_length",
    );
  }

  const maxOutput = limits.maxOutputTokens ?? DEFAULTS.maxOutputTokens;
  const field = body?.max_completion_tokens !== undefined ? "max_completion_tokens" : "max_tokens";
  const requested: number | undefined = body?.[field] ?? undefined;
  if (requested !== undefined && requested > maxOutput) {
    return kind !== "openai"
      ? refusal(`Invalid max_tokens value, the valid range of max_tokens is [1, ${maxOutput}]`, null, "invalid_request_error")
      : refusal(
          `max_tokens is too large: ${requested}. This model supports at most ${maxOutput} completion tokens, whereas you provided ${requested}.`,
          field,
          null,
        );
  }

  const pairing = pairingRefusal(messages, kind);
  if (pairing) return pairing;

  if (kind === "deepseek-reasoner" && messages.some((m) => m?.reasoning_content !== undefined)) {
    return refusal("reasoning_content is not accepted in input messages.", "messages", "invalid_request_error");
  }
  if (kind === "deepseek-v4" && thinkingOn(body, limits)) {
    const bare = messages.findIndex((m) => m?.role === "assistant" && m.tool_calls?.length && typeof m.reasoning_content !== "string");
    if (bare >= 0) return refusal(REASONING_NOT_PASSED_BACK, null, "invalid_request_error");
  }

  const window = limits.windowTokens ?? DEFAULTS.windowTokens;
  const prompt = promptTokens(body, limits);
  if (prompt + (requested ?? 0) > window) {
    return kind !== "openai"
      ? refusal(
          `This model's maximum context length is ${window} tokens. However, you requested ${prompt + (requested ?? 0)} tokens (${prompt} in the messages, ${requested ?? 0} in the completion). Please reduce the length of the messages or completion.`,
          null,
          "invalid_request_error",
        )
      : refusal(
          requested === undefined
            ? `This model's maximum context length is ${window} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`
            : `This model's maximum context length is ${window} tokens. However, you requested ${prompt + requested} tokens (${prompt} in the messages, ${requested} in the completion). Please reduce the length of the messages or completion.`,
          "messages",
          "context_length_exceeded",
        );
  }
  return undefined;
}

/** Every assistant tool call answered by a tool message right after it, and no tool message without its call. */
function pairingRefusal(messages: any[], kind: ProviderKind): Refusal | undefined {
  let open: Set<string> | undefined; // the ids the latest assistant tool-call turn still waits for
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message?.role === "tool") {
      if (!open?.delete(message.tool_call_id)) {
        return kind !== "openai"
          ? refusal("Messages with role 'tool' must be a response to a preceding message with 'tool_calls'", null, "invalid_request_error")
          : refusal(
              "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
              `messages.[${i}].role`,
              null,
            );
      }
      continue;
    }
    if (open?.size) return unanswered(open, kind, i);
    open = message?.role === "assistant" && message.tool_calls?.length ? new Set(message.tool_calls.map((c: any) => c.id)) : undefined;
  }
  return open?.size ? unanswered(open, kind, messages.length) : undefined;
}

function unanswered(ids: Set<string>, kind: ProviderKind, at: number): Refusal {
  return kind !== "openai"
    ? refusal(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
        null,
        "invalid_request_error",
      )
    : refusal(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...ids].join(", ")}`,
        `messages.[${at}].role`,
        null,
      );
}

/** The prompt's tokens as the project counts them: the messages, and the tool definitions. */
export function promptTokens(body: any, limits: ProviderLimits = {}): number {
  const counter = tokenCounterFor(limits.tokenizerModel ?? DEFAULTS.tokenizerModel);
  const tools = Array.isArray(body?.tools) && body.tools.length ? counter.count(JSON.stringify(body.tools)) : 0;
  return counter.countMessages((body?.messages ?? []) as ChatMessage[]) + tools;
}

/**
 * Starts the stand-in in front of `upstream` (the base URL of an OpenAI-compatible server, e.g.
 * a scripted model's `url`). Only streamed requests are served: that is how Stepwise calls models,
 * and a reply can only be cut token by token in a stream.
 */
export async function startStrictProvider(upstream: string, limits: ProviderLimits = {}): Promise<StrictProvider> {
  const requests: StrictRequest[] = [];
  const sockets = new Set<Socket>();
  const encoding = getEncoding(encodingForModel(limits.tokenizerModel ?? DEFAULTS.tokenizerModel));
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else
        sendJson(res, 500, {
          error: { message: `strict provider failed: ${String(error)}`, type: "server_error", param: null, code: null },
        });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = new URL(req.url ?? "/", "http://localhost").pathname.replace(/^\/v1/, "").replace(/\/+$/, "");
    if (req.method !== "POST" || path !== "/chat/completions") {
      const answer = await fetch(`${upstream}${path}`, { method: req.method, body: req.method === "POST" ? raw : undefined });
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      return void res.end(Buffer.from(await answer.arrayBuffer()));
    }
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendJson(res, 400, { error: refusal("We could not parse the JSON body of your request.", null, null).error });
    }
    const request: StrictRequest = { body };
    requests.push(request);
    request.refusal =
      body.stream === true
        ? refusalOf(body, limits)
        : refusal("The strict provider stand-in serves streamed requests only.", "stream", null);
    if (request.refusal) return sendJson(res, request.refusal.status, { error: request.refusal.error });

    const requested = body.max_completion_tokens ?? body.max_tokens;
    const outputLimit = Math.min(requested ?? Number.POSITIVE_INFINITY, limits.maxOutputTokens ?? DEFAULTS.maxOutputTokens);
    const reasoning = thinkingOn(body, limits) ? `Thinking about request ${requests.length}: what to do next.` : undefined;
    const controller = new AbortController();
    const answer = await fetch(`${upstream}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: raw,
      signal: controller.signal,
    });
    if (!answer.ok || !answer.body) {
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      return void res.end(Buffer.from(await answer.arrayBuffer()));
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const reply = new CuttingReply(encoding, outputLimit, promptTokens(body, limits), reasoning, (chunk) =>
      res.write(`data: ${JSON.stringify(chunk)}\n\n`),
    );
    request.reasoning = reasoning;
    const parser = createParser({
      onEvent: (event) => {
        if (reply.ended || event.data === "[DONE]") return;
        reply.push(JSON.parse(event.data) as ChatCompletionChunk);
      },
    });
    const decoder = new TextDecoder();
    for await (const bytes of answer.body) {
      parser.feed(decoder.decode(bytes as Uint8Array, { stream: true }));
      if (reply.ended) break;
    }
    controller.abort();
    reply.end();
    request.cut = reply.cut;
    res.end("data: [DONE]\n\n");
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    refusals: () => requests.flatMap((r) => (r.refusal ? [r.refusal] : [])),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * One reply passing through: reasoning first (when the provider thinks), then the server's deltas
 * until the output tokens reach the limit, where the reply stops with `finish_reason: "length"`
 * and the usage the provider would report.
 */
class CuttingReply {
  private written = "";
  private writtenTokens = 0;
  private meta: Pick<ChatCompletionChunk, "id" | "created" | "model"> | undefined;
  private finishSent = false;
  private usageSent = false;
  private reasoned = false;
  ended = false;
  cut = false;

  constructor(
    private readonly encoding: Tiktoken,
    private readonly limit: number,
    private readonly promptTokens: number,
    private readonly reasoning: string | undefined,
    private readonly send: (chunk: ChatCompletionChunk) => void,
  ) {}

  push(chunk: ChatCompletionChunk): void {
    this.meta ??= { id: chunk.id, created: chunk.created, model: chunk.model };
    if (this.reasoning !== undefined && !this.reasoned) {
      this.reasoned = true;
      // DeepSeek streams its reasoning before the answer; it counts against the output limit too.
      const fits = this.take(this.reasoning);
      this.emit({ role: "assistant", content: null, reasoning_content: fits } as ChatCompletionChunk.Choice.Delta);
      if (fits !== this.reasoning) {
        this.stop();
        return;
      }
    }
    const choice = chunk.choices?.[0];
    if (!choice) {
      if (chunk.usage) this.sendUsage();
      return;
    }
    const delta = choice.delta ?? {};
    if (delta.content) {
      const fits = this.take(delta.content);
      if (fits) this.emit({ content: fits });
      if (fits !== delta.content) {
        this.stop();
        return;
      }
    }
    for (const part of delta.tool_calls ?? []) {
      const head = { ...part, function: { ...part.function, arguments: "" } };
      const name = part.function?.name ? this.take(part.function.name) : "";
      if (name !== (part.function?.name ?? "")) {
        this.stop();
        return;
      }
      const args = part.function?.arguments ?? "";
      const fits = this.take(args);
      this.emit({ tool_calls: [{ ...head, function: { ...head.function, arguments: fits } }] });
      if (fits !== args) {
        this.stop();
        return;
      }
    }
    if (!delta.content && !delta.tool_calls?.length && !choice.finish_reason) this.emit(delta);
    if (choice.finish_reason) {
      this.finishSent = true;
      this.emit({}, choice.finish_reason);
    }
    if (chunk.usage) this.sendUsage();
  }

  /** The reply's end: a finish reason and usage, if the server did not send them. */
  end(): void {
    if (!this.finishSent) this.emit({}, "stop");
    this.sendUsage();
    this.ended = true;
  }

  /** How much of `text` still fits under the limit (all of it, or a prefix). */
  private take(text: string): string {
    const tokens = this.encoding.encode(this.written + text).length;
    if (tokens <= this.limit) {
      this.written += text;
      this.writtenTokens = tokens;
      return text;
    }
    let low = 0;
    let high = text.length;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (this.encoding.encode(this.written + text.slice(0, mid)).length <= this.limit) low = mid;
      else high = mid - 1;
    }
    this.written += text.slice(0, low);
    this.writtenTokens = this.limit;
    return text.slice(0, low);
  }

  private stop(): void {
    this.cut = true;
    this.finishSent = true;
    this.emit({}, "length");
    this.sendUsage();
    this.ended = true;
  }

  private sendUsage(): void {
    if (this.usageSent) return;
    this.usageSent = true;
    const completion = this.writtenTokens;
    this.send({
      ...this.base(),
      choices: [],
      usage: { prompt_tokens: this.promptTokens, completion_tokens: completion, total_tokens: this.promptTokens + completion },
    });
  }

  private emit(delta: ChatCompletionChunk.Choice.Delta, finish: ChatCompletionChunk.Choice["finish_reason"] = null): void {
    this.send({ ...this.base(), choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });
  }

  private base() {
    return { id: "chatcmpl-strict", created: 0, model: "strict", ...this.meta, object: "chat.completion.chunk" as const };
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function sendJson(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
