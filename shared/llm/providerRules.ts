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
