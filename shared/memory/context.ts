import type { ChatMessage, ToolCall, ToolSpec } from "../llm/types.js";
import { tokenCounterFor } from "./tokens.js";
import { fitToBudget } from "./truncate.js";
import { compressUrls, createUrlTable, restoreUrls, type UrlTable } from "./urls.js";

export interface ContextOptions {
  model: string;
  /** Tokens the prompt may use (the model's window minus room for the answer). */
  budgetTokens: number;
}

/**
 * What the model is sent on each call: the system prompt built fresh, the history cut to the token
 * budget (whole turns, newest first, never a tool call without its results), and long URLs replaced
 * by short placeholders (the Gaoding seed's URL compression) that `restoreArguments` puts back.
 */
export class ContextWindow {
  readonly urls: UrlTable = createUrlTable();
  private readonly counter;

  constructor(private readonly options: ContextOptions) {
    this.counter = tokenCounterFor(options.model);
  }

  build(system: string, conversation: ChatMessage[], tools: ToolSpec[] = []): ChatMessage[] {
    // Tool definitions take room in the prompt too.
    const toolTokens = tools.length ? this.counter.count(JSON.stringify(tools)) : 0;
    const fitted = fitToBudget(
      [{ role: "system", content: system }, ...conversation],
      this.options.budgetTokens - toolTokens,
      this.counter,
    );
    return fitted.map((message) => this.compress(message));
  }

  /** Tool-call arguments as the tools need them: placeholders back to the real URLs. */
  restoreArguments(call: ToolCall): ToolCall {
    return this.urls.urls.length ? { ...call, arguments: restoreUrls(call.arguments, this.urls) } : call;
  }

  /** Text for a person: placeholders the model wrote back to the real URLs. */
  restoreText(text: string): string {
    return this.urls.urls.length ? restoreUrls(text, this.urls) : text;
  }

  countTokens(messages: ChatMessage[]): number {
    return this.counter.countMessages(messages);
  }

  private compress(message: ChatMessage): ChatMessage {
    if (typeof message.content !== "string" || message.role === "system") return message;
    const content = compressUrls(message.content, this.urls);
    return content === message.content ? message : ({ ...message, content } as ChatMessage);
  }
}
