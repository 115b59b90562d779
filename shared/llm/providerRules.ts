// The error class alone: the whole client (0.2 MB) loads with the model port, on its first call.
import { APIError } from "openai/error";
import type { GenerationSettings } from "./types.js";

/**
 * What model families are known to need, written down as data: the context window, the most output
 * tokens one reply may ask for, and whether an assistant tool-call turn must carry its reasoning
 * when sent back. Per-role settings (roleSettings.ts) override each of them; a model not listed here
 * gets the defaults. Figures are the providers' published ones.
 */
export interface ModelRules {
  /** Prompt plus reply, in tokens. */
  contextWindow: number;
  /** The largest output limit the model takes (a larger one is refused with a 400). */
  maxOutputTokens: number;
  /**
   * The provider refuses a tool-call turn sent back without its `reasoning_content` (DeepSeek V4,
   * thinking mode on by default: "The reasoning_content in the thinking mode must be passed back to the API.").
   */
  reasoningReplay: boolean;
}

/** First match wins; the name is matched without a provider prefix ("openai/gpt-4o" → "gpt-4o"). */
const FAMILIES: ReadonlyArray<readonly [pattern: RegExp, rules: Partial<ModelRules>]> = [
  [/^deepseek-(v4|flash|pro)/, { contextWindow: 1_048_576, maxOutputTokens: 393_216, reasoningReplay: true }],
  [/^deepseek-(chat|reasoner)/, { contextWindow: 128_000, maxOutputTokens: 8_192 }],
  [/^(gpt-4o|chatgpt-4o)/, { contextWindow: 128_000, maxOutputTokens: 16_384 }],
  [/^gpt-4\.1/, { contextWindow: 1_047_576, maxOutputTokens: 32_768 }],
  [/^gpt-5/, { contextWindow: 400_000, maxOutputTokens: 128_000 }],
  [/^o[134]/, { contextWindow: 200_000, maxOutputTokens: 100_000 }],
  [/^gpt-3\.5/, { contextWindow: 16_385, maxOutputTokens: 4_096 }],
  [/^claude/, { contextWindow: 200_000, maxOutputTokens: 64_000 }],
  [/^gemini-[23]/, { contextWindow: 1_048_576, maxOutputTokens: 65_536 }],
  [/^qwen/, { contextWindow: 32_768, maxOutputTokens: 8_192 }],
  [/llama-?3\.[123]/, { contextWindow: 128_000, maxOutputTokens: 4_096 }],
];

const DEFAULT_RULES: ModelRules = { contextWindow: 128_000, maxOutputTokens: 16_384, reasoningReplay: false };

/** The rules of a model by its name. */
export function rulesFor(model: string): ModelRules {
  const name = model.toLowerCase().slice(model.lastIndexOf("/") + 1);
  return { ...DEFAULT_RULES, ...FAMILIES.find(([pattern]) => pattern.test(name))?.[1] };
}

/** A role's context window and output limit: its settings, else its model family's. */
export function windowOf(settings: GenerationSettings, model: string): { contextWindow: number; maxOutputTokens: number } {
  const rules = rulesFor(settings.model ?? model);
  return {
    contextWindow: settings.contextWindow ?? rules.contextWindow,
    maxOutputTokens: Math.min(settings.maxOutputTokens ?? rules.maxOutputTokens, settings.contextWindow ?? rules.maxOutputTokens),
  };
}

/**
 * A provider's refusal of a prompt too long for its window, with the window and the size it names
 * where it names them; undefined for any other error. OpenAI's `context_length_exceeded` ("This
 * model's maximum context length is 128000 tokens. However, your messages resulted in 130000
 * tokens"), DeepSeek's and vLLM's same sentence with "you requested N tokens", Anthropic's "prompt
 * is too long: 210000 tokens > 200000 maximum", Gemini's "input token count (N) exceeds the maximum
 * number of tokens allowed (M)".
 */
export function contextOverflowOf(error: unknown): { window?: number; size?: number } | undefined {
  const cause = error instanceof APIError ? error : (error as { cause?: unknown })?.cause;
  if (!(cause instanceof APIError) || (cause.status !== 400 && cause.status !== 413)) return undefined;
  const message = cause.message;
  const known =
    cause.code === "context_length_exceeded" ||
    /maximum context length|context window|prompt is too long|input token count|too many tokens|reduce the length of the messages/i.test(
      message,
    );
  if (!known) return undefined;
  const number = (pattern: RegExp) => {
    const found = message.match(pattern)?.slice(1).find(Boolean);
    return found ? Number(found) : undefined;
  };
  return {
    window: number(/maximum context length is (\d+)|> (\d+) maximum|maximum number of tokens allowed \((\d+)\)/i),
    size: number(/resulted in (\d+) tokens|requested (\d+) tokens|too long: (\d+) tokens|input token count \((\d+)\)/i),
  };
}
