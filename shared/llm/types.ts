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

export interface ChatResponse {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: { promptTokens: number; completionTokens: number };
  /** Paid model requests behind this response, when more than one (e.g. JSON contract corrections). */
  calls?: number;
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
  tools?: ToolSpec[];
  /** Text as it streams in (already coalesced by the caller if needed). */
  onText?: (delta: string) => void;
  signal?: AbortSignal;
}

/** What agents need from a model. One implementation talks to OpenAI-compatible servers. */
export interface ChatModel {
  readonly name: string;
  complete(request: ChatRequest): Promise<ChatResponse>;
}
