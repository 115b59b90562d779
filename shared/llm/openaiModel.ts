import { setTimeout as delay } from "node:timers/promises";
import OpenAI from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { errorMessage, StepError, StepErrorCode } from "../errors.js";
import { rulesFor } from "./providerRules.js";
import { StreamAssembler } from "./streamAssembler.js";
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, GenerationSettings, ModerationResult } from "./types.js";

export interface OpenAIModelOptions {
  model: string;
  baseURL?: string;
  /** A key, or a function that fetches it (from a secret store) when first needed. */
  apiKey?: string | (() => Promise<string>);
  /** One request's time to its first byte, and the longest silence within a streamed reply. */
  timeoutMs?: number;
  /** Retries of a failed request (429, 5xx, connection, timeout) and of a reply that broke off mid-stream. */
  maxRetries?: number;
  /** Sent with every request unless the request brings its own. */
  settings?: GenerationSettings;
  /** The name of the output limit's field: `max_completion_tokens` (OpenAI, Azure) or `max_tokens` (most compatible servers). */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  /** The moderation model `moderate` asks unless told another (default `omni-moderation-latest`). */
  moderationModel?: string;
}

/** Why a streamed reply could not be used: it broke off, stalled, or was no stream at all. */
class IncompleteReply extends Error {
  override name = "IncompleteReply";
}

/**
 * A ChatModel over any OpenAI-compatible Chat Completions endpoint, always streamed so text can
 * reach clients as it is produced. Retries are made here, not inside the `openai` client, so each
 * one is told (`onRetry`: the attempt, the reason, the wait) while the call waits: 408/409/429/5xx
 * and connection failures before a reply starts (with the `openai` client's rules: its backoff,
 * `x-should-retry`, `retry-after-ms` and `Retry-After`), and a reply that breaks off after it
 * started (the connection dropped, a chunk that is not JSON, an error event, a stall, a 200 that is
 * no event stream), its partial reply discarded. What is left after the retries is a retryable
 * Stepwise.ModelUnavailable with a message a person can read.
 */
export class OpenAIModel implements ChatModel {
  readonly name: string;
  private readonly client: OpenAI;
  private readonly retries: number;
  private readonly idleMs: number;

  constructor(private readonly options: OpenAIModelOptions) {
    this.name = options.model;
    this.retries = options.maxRetries ?? 2;
    this.idleMs = options.timeoutMs ?? 120_000;
    this.client = new OpenAI({
      baseURL: options.baseURL,
      // Local OpenAI-compatible servers need no key; the client insists on a string.
      apiKey: options.apiKey || "none",
      timeout: options.timeoutMs,
      maxRetries: 0, // retried in complete(), where each retry is reported
    });
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.stream(request);
      } catch (error) {
        const waitMs = retryWaitMs(error, attempt);
        if (waitMs === undefined || attempt >= this.retries || request.signal?.aborted) throw modelError(error, this.name);
        request.onRetry?.({ attempt: attempt + 1, retries: this.retries, reason: retryReason(error), waitMs });
        await delay(waitMs, undefined, { signal: request.signal }).catch(() => undefined);
      }
    }
  }

  /** `/v1/moderations` of this endpoint (the guardrails' moderation checks); retried by the caller. */
  async moderate(input: string, options: { model?: string; signal?: AbortSignal } = {}): Promise<ModerationResult> {
    const reply = await this.client.moderations.create(
      { input, model: options.model ?? this.options.moderationModel ?? "omni-moderation-latest" },
      { signal: options.signal, maxRetries: 0 },
    );
    const flagged = reply.results.filter((r) => r.flagged);
    const categories = flagged.flatMap((r) =>
      Object.entries(r.categories as unknown as Record<string, boolean>)
        .filter(([, on]) => on)
        .map(([name]) => name),
    );
    return { flagged: flagged.length > 0, categories: [...new Set(categories)] };
  }

  private async stream(request: ChatRequest): Promise<ChatResponse> {
    const settings = { ...this.options.settings, ...request.settings };
    const limitField = this.options.maxTokensField ?? "max_tokens";
    const model = settings.model ?? this.name;
    // Reasoning goes back only to a provider that requires it; others may refuse the field.
    const replay = settings.reasoningReplay ?? rulesFor(model).reasoningReplay;
    const body: ChatCompletionCreateParamsStreaming = {
      ...settings.requestFields,
      model,
      messages: replay ? request.messages : withoutReasoning(request.messages),
      tools: request.tools?.length ? request.tools : undefined,
      tool_choice: request.tools?.length ? "auto" : undefined,
      stream: true,
      stream_options: { include_usage: true },
      ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
      ...(settings.maxOutputTokens !== undefined ? { [limitField]: settings.maxOutputTokens } : {}),
      ...(settings.reasoningEffort !== undefined ? { reasoning_effort: settings.reasoningEffort } : {}),
    };
    const stream = await this.client.chat.completions.create(body, { signal: request.signal });
    const assembler = new StreamAssembler();
    let stalled = false;
    let timer: NodeJS.Timeout | undefined;
    const watch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        stalled = true;
        stream.controller.abort();
      }, this.idleMs);
    };
    try {
      watch();
      for await (const chunk of stream) {
        watch();
        const { text, reasoning } = assembler.push(chunk);
        if (reasoning) request.onReasoning?.(reasoning);
        if (text) request.onText?.(text);
      }
    } catch (error) {
      if (request.signal?.aborted || error instanceof OpenAI.APIUserAbortError) throw error;
      throw new IncompleteReply(`the reply broke off (${describe(error)})`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
    if (stalled) throw new IncompleteReply(`the reply stalled: nothing for ${Math.round(this.idleMs / 1000)} s`);
    if (!assembler.finished) {
      throw new IncompleteReply(
        assembler.chunks
          ? "the reply ended before it was complete (no finish reason)"
          : "the answer was not a stream of events (an error page?)",
      );
    }
    const { reasoning, ...response } = assembler.result();
    return { ...response, model: body.model, ...(replay && reasoning ? { reasoning } : {}) };
  }
}

/** The messages without `reasoning_content` (kept by a loop whose provider wanted it back). */
function withoutReasoning(messages: ChatMessage[]): ChatMessage[] {
  if (!messages.some((m) => "reasoning_content" in m)) return messages;
  return messages.map((message) => {
    if (!("reasoning_content" in message)) return message;
    const { reasoning_content: _, ...rest } = message as ChatMessage & { reasoning_content?: string };
    return rest as ChatMessage;
  });
}

/**
 * How long to wait before retrying after `error` (the `attempt`-th retry, from 0), or undefined if
 * no retry helps: the `openai` client's rules. The server's `x-should-retry` decides when sent;
 * else 408, 409, 429, 5xx, connection failures and broken replies are retried, after the server's
 * `retry-after-ms` or `Retry-After` (up to a minute), or 0.5 s doubling up to 8 s, less up to 25 %.
 */
function retryWaitMs(error: unknown, attempt: number): number | undefined {
  if (error instanceof OpenAI.APIUserAbortError) return undefined;
  if (error instanceof OpenAI.APIError && !(error instanceof OpenAI.APIConnectionError)) {
    const should = error.headers?.get("x-should-retry");
    const status = error.status ?? 0;
    if (should === "false" || (should !== "true" && !(status === 408 || status === 409 || status === 429 || status >= 500)))
      return undefined;
    const asked = retryAfterMs(error.headers);
    if (asked !== undefined) return asked;
  } else if (!(error instanceof OpenAI.APIConnectionError) && !(error instanceof IncompleteReply)) return undefined;
  return Math.round(Math.min(8_000, 500 * 2 ** attempt) * (1 - Math.random() / 4));
}

/** The wait a server asks for (`retry-after-ms`, then `Retry-After` in seconds or as a date), when under a minute. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  const after = headers?.get("retry-after");
  const asked = !Number.isNaN(ms)
    ? ms
    : after
      ? /^\d+(\.\d+)?$/.test(after.trim())
        ? Number(after) * 1000
        : Date.parse(after) - Date.now()
      : Number.NaN;
  return asked >= 0 && asked < 60_000 ? Math.round(asked) : undefined;
}

/** Why a call is retried, in a few words a person can read. */
function retryReason(error: unknown): string {
  if (error instanceof IncompleteReply) return error.message;
  if (error instanceof OpenAI.APIConnectionTimeoutError) return "the request timed out";
  if (error instanceof OpenAI.APIConnectionError) return `the model could not be reached (${rootCause(error)})`;
  if (error instanceof OpenAI.APIError)
    return `the model answered ${error.status ?? "an error"}${error.message ? `: ${error.message}` : ""}`;
  return errorMessage(error);
}

/** The innermost cause's code or message ("ECONNREFUSED", "fetch failed"). */
function rootCause(error: unknown): string {
  let inner = error as { cause?: unknown; code?: unknown; message?: unknown };
  while (inner.cause && typeof inner.cause === "object") inner = inner.cause as typeof inner;
  return typeof inner.code === "string" ? inner.code : errorMessage(inner);
}

function describe(error: unknown): string {
  if (error instanceof SyntaxError) return `a chunk was not valid JSON: ${error.message}`;
  if (error instanceof OpenAI.APIError) return `an error event: ${error.message}`;
  const cause = (error as { cause?: unknown })?.cause;
  return cause ? `${errorMessage(error)}: ${errorMessage(cause)}` : errorMessage(error);
}

/** The client has retried what it could (408/409/429/5xx, connection errors); what is left is typed. */
function modelError(error: unknown, model: string): unknown {
  if (error instanceof OpenAI.APIUserAbortError) return error; // the caller aborted: its reason rules
  if (error instanceof IncompleteReply)
    return new StepError(StepErrorCode.ModelUnavailable, `The model ${model} failed mid-reply: ${error.message}.`, error);
  if (error instanceof OpenAI.APIConnectionError) {
    return new StepError(StepErrorCode.ModelUnavailable, `The model could not be reached: ${error.message}`, error);
  }
  if (error instanceof OpenAI.APIError) {
    const status = error.status ?? 0;
    const transient = status === 408 || status === 409 || status === 429 || status >= 500 || status === 0;
    return new StepError(
      transient ? StepErrorCode.ModelUnavailable : StepErrorCode.ModelRejected,
      `The model answered ${status || "with an error"}: ${error.message}`,
      error,
    );
  }
  return error;
}
