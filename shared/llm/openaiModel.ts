import OpenAI from "openai";
import { StepError, StepErrorCode } from "../errors.js";
import { StreamAssembler } from "./streamAssembler.js";
import type { ChatModel, ChatRequest, ChatResponse } from "./types.js";

export interface OpenAIModelOptions {
  model: string;
  baseURL?: string;
  /** A key, or a function that fetches it (from a secret store) when first needed. */
  apiKey?: string | (() => Promise<string>);
  timeoutMs?: number;
  maxRetries?: number;
}

/**
 * A ChatModel over any OpenAI-compatible Chat Completions endpoint, always streamed so text can
 * reach clients as it is produced. The `openai` client retries 408/409/429/5xx with backoff.
 */
export class OpenAIModel implements ChatModel {
  readonly name: string;
  private readonly client: OpenAI;

  constructor(options: OpenAIModelOptions) {
    this.name = options.model;
    this.client = new OpenAI({
      baseURL: options.baseURL,
      // Local OpenAI-compatible servers need no key; the client insists on a string.
      apiKey: options.apiKey || "none",
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
    });
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    try {
      return await this.stream(request);
    } catch (error) {
      throw modelError(error);
    }
  }

  private async stream(request: ChatRequest): Promise<ChatResponse> {
    const stream = await this.client.chat.completions.create(
      {
        model: this.name,
        messages: request.messages,
        tools: request.tools?.length ? request.tools : undefined,
        tool_choice: request.tools?.length ? "auto" : undefined,
        stream: true,
        stream_options: { include_usage: true },
      },
      { signal: request.signal },
    );
    const assembler = new StreamAssembler();
    for await (const chunk of stream) {
      const text = assembler.push(chunk);
      if (text) request.onText?.(text);
    }
    return assembler.result();
  }
}

/** The client has retried what it could (408/409/429/5xx, connection errors); what is left is typed. */
function modelError(error: unknown): unknown {
  if (error instanceof OpenAI.APIUserAbortError) return error; // the caller aborted: its reason rules
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
