import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ChatResponse, ToolCall } from "./types.js";

/**
 * Rebuilds a complete response from streamed chunks. Tool-call deltas arrive keyed by `index`;
 * the id and name usually come first but any field may be null, empty or split across chunks
 * (JD Genie breaks when the first delta is null), so every piece is appended defensively.
 */
export class StreamAssembler {
  private content = "";
  private reasoning = "";
  private sawContent = false;
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();
  private finishReason: string | null = null;
  private usage = { promptTokens: 0, completionTokens: 0 };

  /** Chunks received, and whether one said why the reply ended (a reply cut off never does). */
  chunks = 0;
  get finished(): boolean {
    return this.finishReason !== null;
  }

  /**
   * Feeds one chunk; returns the text delta it carried and the reasoning delta (DeepSeek's and
   * vLLM's `reasoning_content`, OpenRouter's and Ollama's `reasoning`). The reasoning is kept too:
   * the model decides whether its provider wants it back (OpenAIModel).
   */
  push(chunk: ChatCompletionChunk): { text: string; reasoning: string } {
    this.chunks++;
    if (chunk.usage) {
      this.usage = { promptTokens: chunk.usage.prompt_tokens ?? 0, completionTokens: chunk.usage.completion_tokens ?? 0 };
    }
    let text = "";
    let reasoning = "";
    for (const choice of chunk.choices ?? []) {
      if (choice.index !== undefined && choice.index !== 0) continue;
      const delta = choice.delta as
        | (ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null; reasoning?: string | null })
        | undefined;
      const thought = delta?.reasoning_content ?? delta?.reasoning;
      if (typeof thought === "string") {
        reasoning += thought;
        this.reasoning += thought;
      }
      if (delta?.content) {
        this.content += delta.content;
        this.sawContent = true;
        text += delta.content;
      }
      for (const part of delta?.tool_calls ?? []) {
        const index = this.indexOf(part);
        const call = this.calls.get(index) ?? { id: "", name: "", arguments: "" };
        if (part.id) call.id = part.id;
        // A name is sent once (OpenAI) or repeated on every part (some compatible servers).
        if (part.function?.name && part.function.name !== call.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        this.calls.set(index, call);
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return { text, reasoning };
  }

  /**
   * Which call a tool-call part belongs to: its `index`; without one (Gemini sends each call whole,
   * unindexed, and may give them all one id), a part that brings another id, or a name once the
   * current call has arguments, starts the next call.
   */
  private indexOf(part: ChatCompletionChunk.Choice.Delta.ToolCall): number {
    if (typeof part.index === "number") return part.index;
    const last = this.calls.size ? Math.max(...this.calls.keys()) : -1;
    const current = this.calls.get(last);
    if (!current) return last + 1;
    const anotherId = Boolean(part.id && current.id && part.id !== current.id);
    const anotherCall = Boolean(part.function?.name && current.name && current.arguments);
    return anotherId || anotherCall ? last + 1 : last;
  }

  result(): ChatResponse {
    // Ids tie a call to its result: one missing or repeated (Gemini's and some local servers' ids
    // are) gets one of its own, the same every time the same reply is read.
    const seen = new Set<string>();
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => {
        let id = call.id && !seen.has(call.id) ? call.id : `call_${index}`;
        while (seen.has(id)) id = `${id}_${index}`;
        seen.add(id);
        return { id, name: call.name, arguments: call.arguments };
      });
    return {
      content: this.sawContent ? this.content : null,
      toolCalls,
      finishReason: this.finishReason,
      usage: this.usage,
      ...(this.reasoning ? { reasoning: this.reasoning } : {}),
    };
  }
}
