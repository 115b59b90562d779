import OpenAI from "openai";
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
