import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";

/** Messages and tools are the OpenAI Chat Completions shapes, the lingua franca of providers. */
export type ChatMessage = ChatCompletionMessageParam;
export type ToolSpec = ChatCompletionTool;

export interface ToolCall {
  id: string;
  name: string;
  /** The raw JSON string the model produced; parsed and validated by the tool registry. */
  arguments: string;
}

/** A call's arguments as JSON, or undefined when they are not JSON (what a schema or a policy reads). */
export function parseOrUndefined(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

export interface ChatResponse {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: { promptTokens: number; completionTokens: number };
  /** Paid model requests behind this response, when more than one (e.g. JSON contract corrections). */
  calls?: number;
  /** The model that answered (the fallback model, when the first was unavailable). */
  model?: string;
  /** Set when the fallback model answered because the first stayed unavailable after its retries. */
  fallback?: boolean;
  /**
   * The reasoning behind the reply, kept only for a provider that wants it back on tool-call turns
   * (GenerationSettings.reasoningReplay): it goes back as that assistant message's `reasoning_content`.
   */
  reasoning?: string;
}

/** How a request is generated; unset fields are left to the provider. */
export interface GenerationSettings {
  /** Another model for this request (a role's own model). */
  model?: string;
  temperature?: number;
  /** The model's context window in tokens (prompt and reply); not sent, it sets the prompt's budget. */
  contextWindow?: number;
  /** The reply's token limit (sent as `max_tokens` or `max_completion_tokens`). */
  maxOutputTokens?: number;
  /** For reasoning models (o-series, DeepSeek, Qwen with thinking): minimal, low, medium or high. */
  reasoningEffort?: "minimal" | "low" | "medium" | "high";
  /**
   * Whether an assistant tool-call turn must carry its reasoning (`reasoning_content`) when sent back
   * (DeepSeek V4 in thinking mode refuses it otherwise); unset: as the model's family requires (providerRules.ts).
   */
  reasoningReplay?: boolean;
  /** The provider's own request fields (`thinking`, `enable_thinking`, `chat_template_kwargs`, …), sent as given. */
  requestFields?: Record<string, unknown>;
}

/** One retry of a model call: which one (1 = the first retry, of `retries`), why, and how long it waits first. */
export interface ModelRetry {
  attempt: number;
  retries: number;
  reason: string;
  waitMs: number;
}

/** What a failed model call had already cost (set on the error it throws). */
export interface PaidAttempts {
  paidCalls: number;
  usage?: { promptTokens: number; completionTokens: number };
}

/** The cost a failed call reports: its own count, or one request. */
export function paidAttemptsOf(error: unknown): PaidAttempts {
  const paid = (error as Partial<PaidAttempts> | undefined)?.paidCalls;
  return { paidCalls: typeof paid === "number" ? paid : 1, usage: (error as Partial<PaidAttempts> | undefined)?.usage };
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Which agent asks: a model with per-role settings applies that role's. */
  role?: "router" | "planner" | "executor" | "react" | "summarizer" | "title";
  /** Settings for this request (over the model's own). */
  settings?: GenerationSettings;
  tools?: ToolSpec[];
  /** Text as it streams in (already coalesced by the caller if needed). */
  onText?: (delta: string) => void;
  /** Reasoning text as it streams in (`reasoning_content` / `reasoning`): shown, never kept in the response. */
  onReasoning?: (delta: string) => void;
  /** The call failed and waits to be tried again; what it streamed so far (onText, onReasoning) is void. */
  onRetry?: (retry: ModelRetry) => void;
  signal?: AbortSignal;
}

/** What an OpenAI-compatible moderation endpoint (`/v1/moderations`) says of one text. */
export interface ModerationResult {
  flagged: boolean;
  /** The categories flagged ("violence", "hate/threatening"...). */
  categories: string[];
}

/** What agents need from a model. One implementation talks to OpenAI-compatible servers. */
export interface ChatModel {
  readonly name: string;
  complete(request: ChatRequest): Promise<ChatResponse>;
  /** The endpoint's moderation (guardrails), where it has one. */
  moderate?(input: string, options?: { model?: string; signal?: AbortSignal }): Promise<ModerationResult>;
}

/** The moderation of `model`, for a wrapper to pass on beside its own `complete`. */
export function moderationOf(model: ChatModel): Pick<ChatModel, "moderate"> {
  const { moderate } = model;
  return moderate ? { moderate: (input, options) => moderate.call(model, input, options) } : {};
}
