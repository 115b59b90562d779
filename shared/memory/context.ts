import type { ChatMessage, ToolCall, ToolSpec } from "../llm/types.js";
import { compactTurn, type RereadHint } from "./compaction.js";
import { tokenCounterFor } from "./tokens.js";
import { fitToBudget } from "./truncate.js";
import { compressUrls, createUrlTable, restoreUrls, type UrlTable } from "./urls.js";

export interface ContextOptions {
  model: string;
  /** Tokens the prompt may use (the model's window minus room for the answer). */
  budgetTokens: number;
  /** Where the agent's own turn starts in the conversation: its tool rounds are compacted to fit (compaction.ts). */
  turnStart?: number;
  /** How a compacted tool output can be read again. */
  reread?: RereadHint;
}

/**
 * What the model is sent on each call: the system prompt built fresh, the history cut to the token
 * budget (whole turns, newest first, never a tool call without its results), and long URLs replaced
 * by short placeholders (the Gaoding seed's URL compression) that `restoreArguments` puts back.
 */
export class ContextWindow {
  readonly urls: UrlTable = createUrlTable();
  private readonly counter;
  /** Tokens the prompt may use; lowered when a provider says its window is smaller. */
  budget: number;

  constructor(private readonly options: ContextOptions) {
    this.counter = tokenCounterFor(options.model);
    this.budget = options.budgetTokens;
  }

  /**
   * The prompt: the turn's oldest tool outputs compacted when the turn outgrows the budget (this
   * changes `conversation`, so later prompts keep the same prefix), then the history cut to fit.
   */
  build(system: string, conversation: ChatMessage[], tools: ToolSpec[] = []): ChatMessage[] {
    this.compact(system, conversation, tools, false);
    // Tool definitions take room in the prompt too.
    const fitted = fitToBudget([{ role: "system", content: system }, ...conversation], this.budget - this.toolTokens(tools), this.counter);
    return fitted.map((message) => this.compress(message));
  }

  /**
   * After a provider refused the prompt as too long for `window` (when it says): the budget is
   * lowered to fit that window, and the turn compacted by one more block. False when nothing was
   * left to compact: the prompt cannot be made to fit.
   */
  shrink(system: string, conversation: ChatMessage[], tools: ToolSpec[], window?: number, outputTokens = 0): boolean {
    if (window) this.budget = Math.min(this.budget, window - outputTokens);
    return this.compact(system, conversation, tools, true) > 0;
  }

  private compact(system: string, conversation: ChatMessage[], tools: ToolSpec[], force: boolean): number {
    if (this.options.turnStart === undefined || !this.options.reread) return 0;
    // What the turn shares the budget with: the system prompt, the tool definitions, and (at least) the current request.
    const request = conversation.slice(Math.max(0, this.options.turnStart - 1), this.options.turnStart);
    const fixedTokens = this.counter.countMessages([{ role: "system", content: system }, ...request]) + this.toolTokens(tools);
    return compactTurn(conversation, this.options.turnStart, {
      fixedTokens,
      budgetTokens: this.budget,
      counter: this.counter,
      reread: this.options.reread,
      force,
    });
  }

  private toolTokens(tools: ToolSpec[]): number {
    return tools.length ? this.counter.count(JSON.stringify(tools)) : 0;
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
