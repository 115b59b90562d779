// Streamed Chat Completions replies in the shapes providers document (and send): each provider's
// reply that calls tools, and its reply that answers. The calls are calculator 17*23 and 2+2; the
// answer is ANSWER. Replayed by a scripted server through the real `openai` client, each must end
// in a correct run.

import type { ChatCompletionChunk } from "openai/resources/chat/completions";

export const ANSWER = "17*23 is 391 and 2+2 is 4.";
const ARGS = ['{"expression": "17*23"}', '{"expression": "2+2"}'];

export interface ProviderFixture {
  /** What the fixture shows that others do not. */
  traits: string;
  toolCalls: object[];
  answer: object[];
  /** Reasoning text the replies carry (shown as agent.reasoning, never sent back). */
  reasoning?: string;
  /** Prompt tokens the two replies report together (undefined: they report none). */
  promptTokens?: number;
}

const base = (model: string) => ({ id: `chatcmpl-${model}`, object: "chat.completion.chunk", created: 1_764_000_000, model });
const choice = (delta: object, finish: string | null = null, extra: object = {}) => ({
  index: 0,
  delta,
  finish_reason: finish,
  logprobs: null,
  ...extra,
});
/** The answer split into pieces anywhere, mid-word included. */
const answerPieces = ["17*2", "3 is 3", "91 and", " 2+2 is", " 4."];
/** An argument string split at uneven places. */
const split = (text: string, at: number[]) => [0, ...at].map((from, i, cuts) => text.slice(from, cuts[i + 1]));

/** OpenAI: a role chunk, each call's id and name with empty arguments then pieces, a finish chunk, usage last with no choices. */
function openai(): ProviderFixture {
  const b = { ...base("gpt-4o-mini-2024-07-18"), system_fingerprint: "fp_0ba0d124f1", service_tier: "default" };
  const chunk = (delta: object, finish: string | null = null) => ({
    ...b,
    choices: [choice(delta, finish)],
    usage: null,
    obfuscation: "x1",
  });
  const usage = (prompt: number, completion: number) => ({
    ...b,
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  });
  return {
    traits: "ids and names first, arguments in pieces, usage in a last chunk without choices",
    toolCalls: [
      chunk({ role: "assistant", content: null, refusal: null }),
      ...ARGS.flatMap((args, i) => [
        chunk({ tool_calls: [{ index: i, id: `call_oa${i}`, type: "function", function: { name: "calculator", arguments: "" } }] }),
        ...split(args, [1, 14]).map((part) => chunk({ tool_calls: [{ index: i, function: { arguments: part } }] })),
      ]),
      chunk({}, "tool_calls"),
      usage(120, 40),
    ],
    answer: [
      chunk({ role: "assistant", content: "", refusal: null }),
      ...answerPieces.map((content) => chunk({ content })),
      chunk({}, "stop"),
      usage(200, 12),
    ],
    promptTokens: 320,
  };
}

/** Azure OpenAI: a first chunk with no choices and prompt filter results, content filter results on each choice, an empty model name at first. */
function azure(): ProviderFixture {
  const filters = {
    hate: { filtered: false, severity: "safe" },
    self_harm: { filtered: false, severity: "safe" },
    sexual: { filtered: false, severity: "safe" },
    violence: { filtered: false, severity: "safe" },
  };
  const b = base("gpt-4o-2024-11-20");
  const first = {
    id: "",
    object: "",
    created: 0,
    model: "",
    choices: [],
    prompt_filter_results: [{ prompt_index: 0, content_filter_results: filters }],
  };
  const chunk = (delta: object, finish: string | null = null) => ({
    ...b,
    system_fingerprint: "fp_ee1d74bde0",
    choices: [choice(delta, finish, { content_filter_results: finish ? {} : filters })],
  });
  const usage = (prompt: number, completion: number) => ({
    ...b,
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  });
  return {
    traits: "a choiceless first chunk with prompt filter results, filter results on every choice",
    toolCalls: [
      first,
      chunk({ role: "assistant", content: null }),
      ...ARGS.flatMap((args, i) => [
        chunk({ tool_calls: [{ index: i, id: `call_az${i}`, type: "function", function: { name: "calculator", arguments: "" } }] }),
        ...split(args, [5, 6, 20]).map((part) => chunk({ tool_calls: [{ index: i, function: { arguments: part } }] })),
      ]),
      chunk({}, "tool_calls"),
      usage(130, 41),
    ],
    answer: [
      first,
      chunk({ role: "assistant", content: "" }),
      ...answerPieces.map((content) => chunk({ content })),
      chunk({}, "stop"),
      usage(210, 13),
    ],
    promptTokens: 340,
  };
}

/** DeepSeek: reasoning_content before the content, usage on the finish chunk itself, cache hit counts. */
function deepseek(): ProviderFixture {
  const b = { ...base("deepseek-reasoner"), system_fingerprint: "fp_a1b2c3_prod0820_fp8_kvcache" };
  const chunk = (delta: object, finish: string | null = null, usage: object | null = null) => ({
    ...b,
    choices: [choice(delta, finish)],
    usage,
  });
  const usage = (prompt: number, completion: number) => ({
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_cache_hit_tokens: 64,
    prompt_cache_miss_tokens: prompt - 64,
    completion_tokens_details: { reasoning_tokens: 20 },
  });
  return {
    traits: "reasoning_content, then tool calls; usage in the finish chunk",
    reasoning: "The user wants two products. I should use the calculator.Both results are in.",
    toolCalls: [
      chunk({ role: "assistant", content: null, reasoning_content: "" }),
      chunk({ content: null, reasoning_content: "The user wants two products. " }),
      chunk({ content: null, reasoning_content: "I should use the calculator." }),
      ...ARGS.map((args, i) =>
        chunk({
          content: null,
          tool_calls: [{ index: i, id: `call_0_ds${i}`, type: "function", function: { name: "calculator", arguments: args } }],
        }),
      ),
      chunk({ content: null }, "tool_calls", usage(150, 60)),
    ],
    answer: [
      chunk({ role: "assistant", content: null, reasoning_content: "" }),
      chunk({ content: null, reasoning_content: "Both results are in." }),
      ...answerPieces.map((content) => chunk({ content, reasoning_content: null })),
      chunk({ content: "" }, "stop", usage(240, 30)),
    ],
    promptTokens: 390,
  };
}

/** Qwen through vLLM (--reasoning-parser, --tool-call-parser hermes): reasoning_content, the first call part with an id and empty arguments. */
function qwenVllm(): ProviderFixture {
  const b = base("Qwen/Qwen3-32B");
  const chunk = (delta: object, finish: string | null = null) => ({ ...b, choices: [choice(delta, finish, { stop_reason: null })] });
  const usage = (prompt: number, completion: number) => ({
    ...b,
    choices: [],
    usage: { prompt_tokens: prompt, total_tokens: prompt + completion, completion_tokens: completion, prompt_tokens_details: null },
  });
  return {
    traits: "reasoning_content; one call at a time, arguments from the first character; stop_reason beside finish_reason",
    reasoning: "Two calculations.Done.",
    toolCalls: [
      chunk({ role: "assistant", content: "" }),
      chunk({ reasoning_content: "Two calculations." }),
      ...ARGS.flatMap((args, i) => [
        chunk({ tool_calls: [{ id: `chatcmpl-tool-q${i}`, type: "function", index: i, function: { name: "calculator", arguments: "" } }] }),
        ...split(args, [1, 2, 3]).map((part) => chunk({ tool_calls: [{ index: i, function: { arguments: part } }] })),
      ]),
      chunk({ content: "" }, "tool_calls"),
      usage(160, 50),
    ],
    answer: [
      chunk({ role: "assistant", content: "" }),
      chunk({ reasoning_content: "Done." }),
      ...answerPieces.map((content) => chunk({ content })),
      chunk({ content: "" }, "stop"),
      usage(250, 20),
    ],
    promptTokens: 410,
  };
}

/** Qwen through DashScope's compatible mode: later parts of a call repeat an empty id and a null name. */
function qwenDashscope(): ProviderFixture {
  const b = base("qwen-plus");
  const chunk = (delta: object, finish: string | null = null) => ({
    ...b,
    choices: [choice(delta, finish)],
    usage: null,
    system_fingerprint: null,
  });
  const usage = (prompt: number, completion: number) => ({
    ...b,
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: 0 },
    },
  });
  return {
    traits: 'continuation parts repeat id "" and name null; usage in a last chunk',
    toolCalls: [
      chunk({
        content: null,
        role: "assistant",
        tool_calls: [{ index: 0, id: "call_ds0", type: "function", function: { name: "calculator", arguments: "" } }],
      }),
      ...split(ARGS[0]!, [7]).map((part) =>
        chunk({ content: null, tool_calls: [{ index: 0, id: "", type: "function", function: { name: null, arguments: part } }] }),
      ),
      chunk({
        content: null,
        tool_calls: [{ index: 1, id: "call_ds1", type: "function", function: { name: "calculator", arguments: "" } }],
      }),
      ...split(ARGS[1]!, [3]).map((part) =>
        chunk({ content: null, tool_calls: [{ index: 1, id: "", type: "function", function: { name: null, arguments: part } }] }),
      ),
      chunk({ content: null }, "tool_calls"),
      usage(170, 45),
    ],
    answer: [
      ...answerPieces.map((content, i) => chunk(i ? { content } : { role: "assistant", content })),
      chunk({ content: "" }, "stop"),
      usage(260, 18),
    ],
    promptTokens: 430,
  };
}

/** Ollama: each call whole in one chunk, finish "stop" even after tool calls, `reasoning` (not reasoning_content), no usage chunk. */
function ollama(): ProviderFixture {
  const b = { ...base("qwen3:8b"), system_fingerprint: "fp_ollama" };
  const chunk = (delta: object, finish: string | null = null) => ({ ...b, choices: [{ index: 0, delta, finish_reason: finish }] });
  return {
    traits: "whole calls in one chunk, finish_reason stop after tool calls, `reasoning`, no usage",
    reasoning: "Let me compute both.",
    toolCalls: [
      chunk({ role: "assistant", content: "", reasoning: "Let me compute both." }),
      chunk({
        role: "assistant",
        content: "",
        tool_calls: ARGS.map((args, i) => ({
          id: `call_ol${i}x7`,
          index: i,
          type: "function",
          function: { name: "calculator", arguments: args },
        })),
      }),
      chunk({ role: "assistant", content: "" }, "stop"),
    ],
    answer: [...answerPieces.map((content) => chunk({ role: "assistant", content })), chunk({ role: "assistant", content: "" }, "stop")],
  };
}

/** Anthropic's OpenAI SDK compatibility: toolu_ ids, text before the calls, arguments split anywhere. */
function anthropic(): ProviderFixture {
  const b = base("claude-sonnet-4-5");
  const chunk = (delta: object, finish: string | null = null) => ({ ...b, choices: [choice(delta, finish)] });
  return {
    traits: "text before the calls, toolu_ ids, arguments split anywhere, usage on the finish chunk",
    toolCalls: [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "I'll calculate both." }),
      ...ARGS.flatMap((args, i) => [
        chunk({ tool_calls: [{ index: i, id: `toolu_01A${i}`, type: "function", function: { name: "calculator", arguments: "" } }] }),
        ...split(args, [2, 3, 11, 12]).map((part) => chunk({ tool_calls: [{ index: i, function: { arguments: part } }] })),
      ]),
      { ...chunk({}, "tool_calls"), usage: { prompt_tokens: 180, completion_tokens: 70, total_tokens: 250 } },
    ],
    answer: [
      chunk({ role: "assistant", content: "" }),
      ...answerPieces.map((content) => chunk({ content })),
      { ...chunk({}, "stop"), usage: { prompt_tokens: 270, completion_tokens: 15, total_tokens: 285 } },
    ],
    promptTokens: 450,
  };
}

/** Gemini's OpenAI compatibility: both calls whole in one chunk with no index and the same id, usage on the finish chunk. */
function gemini(): ProviderFixture {
  const b = base("gemini-2.5-flash");
  const chunk = (delta: object, finish: string | null = null, usage?: object) => ({
    ...b,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  });
  return {
    traits: "calls without index, ids repeated, finish_reason stop after tool calls",
    toolCalls: [
      chunk(
        {
          role: "assistant",
          tool_calls: ARGS.map((args) => ({ id: "function-call-1", type: "function", function: { name: "calculator", arguments: args } })),
        },
        "stop",
        { prompt_tokens: 190, completion_tokens: 30, total_tokens: 220 },
      ),
    ],
    answer: [
      ...answerPieces.slice(0, -1).map((content) => chunk({ role: "assistant", content })),
      chunk({ role: "assistant", content: answerPieces.at(-1) }, "stop", { prompt_tokens: 280, completion_tokens: 14, total_tokens: 294 }),
    ],
    promptTokens: 470,
  };
}

export const PROVIDERS: Record<string, ProviderFixture> = {
  openai: openai(),
  azure: azure(),
  deepseek: deepseek(),
  "qwen-vllm": qwenVllm(),
  "qwen-dashscope": qwenDashscope(),
  ollama: ollama(),
  anthropic: anthropic(),
  gemini: gemini(),
};

export type FixtureChunk = ChatCompletionChunk;
