import fc from "fast-check";
import { Tiktoken } from "js-tiktoken/lite";
import cl100k_base from "js-tiktoken/ranks/cl100k_base";
import o200k_base from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../../shared/llm/types.js";
import { type EncodingName, encodingForModel, tokenCounterFor } from "../../../../shared/memory/tokens.js";
import { png } from "../../../support/png.js";

// The cookbook's example ("How to count tokens with tiktoken"), whose counts OpenAI's API confirmed:
// 129 prompt tokens on gpt-3.5-turbo / gpt-4, 124 on gpt-4o / gpt-4o-mini.
const COOKBOOK_MESSAGES: ChatMessage[] = [
  { role: "system", content: "You are a helpful, pattern-following assistant that translates corporate jargon into plain English." },
  { role: "system", name: "example_user", content: "New synergies will help drive top-line growth." },
  { role: "system", name: "example_assistant", content: "Things working well together will increase revenue." },
  {
    role: "system",
    name: "example_user",
    content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage.",
  },
  { role: "system", name: "example_assistant", content: "Let's talk later when we're less busy about how to do better." },
  { role: "user", content: "This late pivot means we don't have time to boil the ocean for the client deliverable." },
];

// js-tiktoken's own encoder is the reference; it is exact but slow on long pieces, so inputs stay short.
const reference: Record<EncodingName, Tiktoken> = { o200k_base: new Tiktoken(o200k_base), cl100k_base: new Tiktoken(cl100k_base) };
const referenceCount = (encoding: EncodingName, text: string) => reference[encoding].encode(text, [], []).length;

const SAMPLES = [
  "",
  "Hello, world!",
  "我们的系统实现了完整的令牌管理机制，包括计数、超限检测和智能截断策略。",
  "日本語のテキストとemoji 👍🏽 and ünïcödé — mixed.",
  "def f(x):\n    return x**2  # square\n\n\n",
  "   leading spaces\t\ttabs\r\nCRLF line\r\n",
  "1234567890 3.14159 -42 1e-9",
  "https://cdn.gaoding.com/design/xxx.jpg?auth_key=abc123def456ghi789&expires=1700000000",
  '{"tool_calls":[{"name":"calculator","arguments":{"expression":"17*23"}}]}',
  "<|endoftext|> special tokens are plain text <|endofprompt|>",
  "I'm sure they'll've done it; WE'RE DONE. It's John's.",
];

describe("encodingForModel", () => {
  it.each([
    ["gpt-4o", "o200k_base"],
    ["gpt-4o-mini-2024-07-18", "o200k_base"],
    ["gpt-4.1-nano", "o200k_base"],
    ["gpt-5", "o200k_base"],
    ["o3-mini", "o200k_base"],
    ["chatgpt-4o-latest", "o200k_base"],
    ["gpt-4", "cl100k_base"],
    ["gpt-4-0613", "cl100k_base"],
    ["gpt-4-turbo", "cl100k_base"],
    ["gpt-3.5-turbo", "cl100k_base"],
    ["azure/gpt-35-turbo", "cl100k_base"],
    ["openai/GPT-4o", "o200k_base"],
    ["qwen-max", "o200k_base"],
    ["stepwise-offline", "o200k_base"],
  ] as const)("%s uses %s", (model, encoding) => {
    expect(encodingForModel(model)).toBe(encoding);
  });
});

describe.each(["o200k_base", "cl100k_base"] as const)("count with %s", (encoding) => {
  const counter = tokenCounterFor(encoding === "o200k_base" ? "gpt-4o" : "gpt-4");

  it.each(SAMPLES)("matches js-tiktoken on %j", (text) => {
    expect(counter.count(text)).toBe(referenceCount(encoding, text));
  });

  it("matches js-tiktoken on random text", () => {
    const text = fc.oneof(fc.string({ unit: "grapheme", maxLength: 60 }), fc.string({ unit: "binary", maxLength: 60 }));
    fc.assert(
      fc.property(text, (t) => counter.count(t) === referenceCount(encoding, t)),
      { numRuns: 300 },
    );
  });

  // Long pieces without spaces, where byte-pair merging is slowest and ties between equal pairs are common.
  it.each([
    ["Chinese", "令牌管理机制包括计数超限检测和智能截断策略".repeat(20)],
    ["one letter", "a".repeat(300)],
    ["two letters", "ab".repeat(150)],
    ["base64", "QmFzZTY0IGVuY29kZWQgYmxvYiB3aXRoIG5vIHNwYWNlcyBhdCBhbGw".repeat(6)],
  ])("matches js-tiktoken on a long %s piece", (_, text) => {
    expect(counter.count(text)).toBe(referenceCount(encoding, text));
  });
});

describe("tokenCounterFor", () => {
  it("counts the cookbook messages as the OpenAI API does", () => {
    expect(tokenCounterFor("gpt-4").countMessages(COOKBOOK_MESSAGES)).toBe(129);
    expect(tokenCounterFor("gpt-3.5-turbo").countMessages(COOKBOOK_MESSAGES)).toBe(129);
    expect(tokenCounterFor("gpt-4o").countMessages(COOKBOOK_MESSAGES)).toBe(124);
    expect(tokenCounterFor("gpt-4o-mini").countMessages(COOKBOOK_MESSAGES)).toBe(124);
  });

  it("shares one counter per encoding", () => {
    expect(tokenCounterFor("gpt-4o")).toBe(tokenCounterFor("gpt-5"));
    expect(tokenCounterFor("gpt-4o")).not.toBe(tokenCounterFor("gpt-4"));
  });

  it("adds 3 tokens per message, the role, 1 per name, and 3 for the reply priming", () => {
    const counter = tokenCounterFor("gpt-4o");
    expect(counter.countMessages([])).toBe(3);
    const user: ChatMessage = { role: "user", content: "Hello, world!" };
    expect(counter.countMessages([user])).toBe(3 + 3 + counter.count("user") + counter.count("Hello, world!"));
    const named: ChatMessage = { ...user, name: "alice" };
    expect(counter.countMessages([named]) - counter.countMessages([user])).toBe(1 + counter.count("alice"));
  });

  it("counts tool calls by name and arguments, and tool results by content", () => {
    const counter = tokenCounterFor("gpt-4o");
    const args = '{"expression":"17*23"}';
    const call: ChatMessage = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_abcdefghijklmnop", type: "function", function: { name: "calculator", arguments: args } }],
    };
    expect(counter.countMessages([call])).toBe(3 + 3 + counter.count("assistant") + counter.count("calculator") + counter.count(args));
    const result: ChatMessage = { role: "tool", tool_call_id: "call_abcdefghijklmnop", content: "391" };
    expect(counter.countMessages([result])).toBe(3 + 3 + counter.count("tool") + counter.count("391"));
  });

  it("counts text parts and a fixed estimate for images", () => {
    const counter = tokenCounterFor("gpt-4o");
    const parts: ChatMessage = {
      role: "user",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
      ],
    };
    expect(counter.countMessages([parts])).toBe(3 + 3 + counter.count("user") + counter.count("What is in this picture?") + 85);
  });

  it.each([
    // OpenAI's vision guide's examples: 1024×1024 is 4 tiles (765); 2048×4096 becomes 768×1536, 6 tiles (1105).
    [1024, 1024, undefined, 765],
    [2048, 4096, undefined, 1105],
    [2048, 4096, "high", 1105],
    [100, 50, undefined, 255],
    [2048, 4096, "low", 85],
  ] as const)("counts a %i×%i image sent as a data URL (detail %s) by OpenAI's tile formula: %i", (width, height, detail, tokens) => {
    const counter = tokenCounterFor("gpt-4o");
    const url = `data:image/png;base64,${png(width, height).toString("base64")}`;
    const image: ChatMessage = { role: "user", content: [{ type: "image_url", image_url: { url, ...(detail ? { detail } : {}) } }] };
    expect(counter.countMessages([image])).toBe(3 + 3 + counter.count("user") + tokens);
    expect(counter.atMost([image])).toBeGreaterThanOrEqual(counter.countMessages([image]));
  });

  it("bounds a prompt from above by its UTF-8 bytes, never below the count (any text, any script)", () => {
    const counter = tokenCounterFor("gpt-4o");
    const message = fc.oneof(
      fc.record({ role: fc.constant("user" as const), content: fc.string({ unit: "grapheme", maxLength: 200 }) }),
      fc.record({
        role: fc.constant("assistant" as const),
        content: fc.constant(null),
        tool_calls: fc.array(
          fc.record({
            id: fc.string(),
            type: fc.constant("function" as const),
            function: fc.record({ name: fc.string({ minLength: 1 }), arguments: fc.string({ unit: "binary" }) }),
          }),
          { maxLength: 3 },
        ),
      }),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 6 }), (messages) => {
        expect(counter.atMost(messages as ChatMessage[])).toBeGreaterThanOrEqual(counter.countMessages(messages as ChatMessage[]));
      }),
      { numRuns: 300 },
    );
    expect(counter.atMost([{ role: "user", content: "你好，世界 🌍" }])).toBe(3 + 3 + 4 + Buffer.byteLength("你好，世界 🌍"));
  });

  it("is additive over messages", () => {
    const counter = tokenCounterFor("gpt-4o");
    const priming = counter.countMessages([]);
    const sum = COOKBOOK_MESSAGES.reduce((total, message) => total + counter.countMessages([message]) - priming, priming);
    expect(counter.countMessages(COOKBOOK_MESSAGES)).toBe(sum);
  });

  it("counts 10,000 Chinese characters in a blink (js-tiktoken's encode takes about 90 s)", () => {
    const counter = tokenCounterFor("gpt-4o");
    const text = "我们的系统实现了完整的令牌管理机制包括计数超限检测和智能截断策略确保对话始终在模型限制内进行".repeat(220);
    const started = performance.now();
    const tokens = counter.count(text);
    // Far from the 90 s of the naive encoder, with room for a busy machine.
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(tokens).toBeGreaterThan(text.length / 3);
    expect(tokens).toBeLessThan(text.length);
  });
});
