// The error class alone: the whole client (0.2 MB) loads with the model port, on its first call.
import { APIError } from "openai/error";
import { logger } from "../observability.js";
import type { ChatModel, ChatRequest, ChatResponse } from "./types.js";

/** A text reply cut at the output limit is continued at most this many times. */
export const MAX_CONTINUATIONS = 4;

/** Sent after a text reply cut at the output limit. */
export const CONTINUE_CUT_REPLY =
  "Your reply was cut off at the output limit. Continue it exactly where it stopped: do not repeat anything already written, do not start over.";

/** How much of a continuation's start is held back to find text it repeats from the end of the reply so far. */
const OVERLAP_WINDOW = 400;
/** A shorter repeat is taken as a coincidence, not a repeat. */
const MIN_OVERLAP = 12;

/**
 * The model, with replies that fit the output limit:
 * - a 400 that says the output limit is above the model's maximum lowers the limit to the maximum
 *   the provider names (or halves it) and asks again; the model keeps the lower limit afterwards;
 * - a text reply that ends with `finish_reason: "length"` is continued, up to MAX_CONTINUATIONS
 *   times, and the parts joined without the text a continuation repeats; the streamed deltas are
 *   the joined text. A reply with tool calls is returned as it is, still marked "length": its cut
 *   arguments must not run (the agent loop tells the model so).
 */
export function withOutputLimit(model: ChatModel): ChatModel {
  /** The limit a provider accepted after refusing a larger one, by model name. */
  const lowered = new Map<string, number>();

  async function once(request: ChatRequest): Promise<ChatResponse & { calls: number }> {
    const name = request.settings?.model ?? model.name;
    for (let calls = 1; ; calls++) {
      const wanted = request.settings?.maxOutputTokens;
      const known = lowered.get(name);
      const limited = known !== undefined && (wanted === undefined || wanted > known) ? withLimit(request, known) : request;
      try {
        const response = await model.complete(limited);
        return { ...response, calls: (response.calls ?? 1) + calls - 1 };
      } catch (error) {
        const maximum = outputLimitRefused(error, limited.settings?.maxOutputTokens);
        if (maximum === undefined || calls > 3 || request.signal?.aborted) throw error;
        logger.warn("the provider refused the output limit; asking again with a lower one", {
          model: name,
          refused: limited.settings?.maxOutputTokens,
          maximum,
        });
        lowered.set(name, maximum);
      }
    }
  }

  return {
    name: model.name,
    async complete(request: ChatRequest): Promise<ChatResponse> {
      let response = await once(request);
      let text = response.content ?? "";
      for (let part = 1; part <= MAX_CONTINUATIONS && isCutText(response); part++) {
        const joiner = new OverlapJoiner(text, request.onText);
        const next = await once({
          ...request,
          messages: [...request.messages, { role: "assistant", content: text }, { role: "user", content: CONTINUE_CUT_REPLY }],
          onText: request.onText ? joiner.push : undefined,
        });
        const added = joiner.end(next.content ?? "");
        text += added;
        response = {
          ...next,
          content: text,
          usage: {
            promptTokens: response.usage.promptTokens + next.usage.promptTokens,
            completionTokens: response.usage.completionTokens + next.usage.completionTokens,
          },
          calls: response.calls + next.calls,
          ...(response.reasoning || next.reasoning ? { reasoning: (response.reasoning ?? "") + (next.reasoning ?? "") } : {}),
        };
      }
      const { calls, ...rest } = response;
      return calls > 1 ? { ...rest, calls } : rest;
    },
  };
}

/** A reply cut at the limit with text only: one to continue. */
function isCutText(response: ChatResponse): boolean {
  return response.finishReason === "length" && response.toolCalls.length === 0 && Boolean(response.content);
}

function withLimit(request: ChatRequest, maxOutputTokens: number): ChatRequest {
  return { ...request, settings: { ...request.settings, maxOutputTokens } };
}

/**
 * The maximum output a provider names when it refuses the limit sent (400), or half the limit when
 * it names none; undefined for any other error.
 * OpenAI: "max_tokens is too large: 100000. This model supports at most 16384 completion tokens";
 * DeepSeek: "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]";
 * others: "expected a value <= 12288", "… must be less than or equal to 4096".
 */
export function outputLimitRefused(error: unknown, sent: number | undefined): number | undefined {
  const cause = error instanceof APIError ? error : (error as { cause?: unknown })?.cause;
  if (!(cause instanceof APIError) || cause.status !== 400 || sent === undefined) return undefined;
  const message = cause.message;
  if (!/max_tokens|max_completion_tokens|max_output_tokens|completion tokens|output tokens/i.test(message)) return undefined;
  const named = message.match(/at most (\d+)|valid range of max_tokens is \[\d+,\s*(\d+)\]|<=\s*(\d+)|less than or equal to (\d+)/i);
  const maximum = Number(named?.slice(1).find(Boolean) ?? Math.floor(sent / 2));
  return maximum > 0 && maximum < sent ? maximum : undefined;
}

/**
 * Joins a continuation to the reply so far, dropping the text it repeats from the reply's end. Its
 * streamed start is held back until the repeat is known, so what a person sees is the joined text.
 */
class OverlapJoiner {
  private held = "";
  private decided = false;

  constructor(
    private readonly before: string,
    private readonly onText?: (delta: string) => void,
  ) {}

  readonly push = (delta: string) => {
    if (this.decided) return this.onText?.(delta);
    this.held += delta;
    if (this.held.length >= OVERLAP_WINDOW) this.release();
  };

  /** The continuation's new text; whatever was held back is streamed now. */
  end(content: string): string {
    if (!this.decided) {
      this.held = content;
      this.release();
    }
    return content.slice(overlap(this.before, content));
  }

  private release(): void {
    this.decided = true;
    const rest = this.held.slice(overlap(this.before, this.held));
    if (rest) this.onText?.(rest);
  }
}

/** The length of the longest start of `next` that `before` ends with (MIN_OVERLAP at least, or 0). */
export function overlap(before: string, next: string): number {
  for (let length = Math.min(before.length, next.length, OVERLAP_WINDOW); length >= MIN_OVERLAP; length--) {
    if (before.endsWith(next.slice(0, length))) return length;
  }
  return 0;
}
