import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ChatResponse, ToolCall } from "./types.js";

/**
 * Rebuilds a complete response from streamed chunks. Tool-call deltas arrive keyed by `index`;
 * the id and name usually come first but any field may be null, empty or split across chunks
 * (JD Genie breaks when the first delta is null), so every piece is appended defensively.
 */
export class StreamAssembler {
  private content = "";
  private sawContent = false;
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();
  private finishReason: string | null = null;
  private usage = { promptTokens: 0, completionTokens: 0 };

  /** Feeds one chunk; returns the text delta it carried, if any. */
  push(chunk: ChatCompletionChunk): string {
    if (chunk.usage) {
      this.usage = { promptTokens: chunk.usage.prompt_tokens ?? 0, completionTokens: chunk.usage.completion_tokens ?? 0 };
    }
    let text = "";
    for (const choice of chunk.choices ?? []) {
      if (choice.index !== undefined && choice.index !== 0) continue;
      const delta = choice.delta;
      if (delta?.content) {
        this.content += delta.content;
        this.sawContent = true;
        text += delta.content;
      }
      for (const part of delta?.tool_calls ?? []) {
        const index = part.index ?? 0;
        const call = this.calls.get(index) ?? { id: "", name: "", arguments: "" };
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        this.calls.set(index, call);
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return text;
  }

  result(): ChatResponse {
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({ id: call.id || `call_${index}`, name: call.name, arguments: call.arguments }));
    return {
      content: this.sawContent ? this.content : null,
      toolCalls,
      finishReason: this.finishReason,
      usage: this.usage,
    };
  }
}
