import { describe, expect, it } from "vitest";
import type { ChatMessage, ToolSpec } from "../../../../shared/llm/types.js";
import { ContextWindow } from "../../../../shared/memory/context.js";
import { tokenCounterFor } from "../../../../shared/memory/tokens.js";
import { agentTools } from "../../../../shared/tools/builtins.js";

const MODEL = "gpt-4o-mini";
const counter = tokenCounterFor(MODEL);
const LONG = "https://cdn.example.com/reports/2024/quarterly/summary-final-v3.pdf?token=abc123def456ghi789";
const OTHER = "https://images.example.com/assets/2024/11/very/deep/path/to/picture-0042.png?size=large";
const SHORT = "https://example.com/a.png";
const SYSTEM = `You are a test agent. Your manual is at ${LONG}`;

const windowOf = (budgetTokens = 100_000) => new ContextWindow({ model: MODEL, budgetTokens });
const call = (id: string, args: object | string) => ({
  id,
  name: "fetch",
  arguments: typeof args === "string" ? args : JSON.stringify(args),
});

describe("ContextWindow: URL compression", () => {
  const conversation: ChatMessage[] = [
    { role: "user", content: `Summarise ${LONG} and look at ${SHORT}` },
    // As the loop keeps it: the call as the model wrote it, with the placeholder it was shown.
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "fetch", arguments: JSON.stringify({ url: "[url:1]" }) } }],
    },
    { role: "tool", tool_call_id: "c1", content: `Fetched ${LONG}; it links to ${OTHER}.` },
  ];

  it("puts placeholders for long URLs in user and tool messages, leaves short URLs and the system prompt alone", () => {
    const prompt = windowOf().build(SYSTEM, conversation);
    expect(prompt).toEqual([
      { role: "system", content: SYSTEM },
      { role: "user", content: `Summarise [url:1] and look at ${SHORT}` },
      conversation[1],
      { role: "tool", tool_call_id: "c1", content: "Fetched [url:1]; it links to [url:2]." },
    ]);
    expect(JSON.stringify(prompt.slice(1))).not.toContain("cdn.example.com/reports");
  });

  it("does not change the conversation it is given", () => {
    const before = structuredClone(conversation);
    windowOf().build(SYSTEM, conversation);
    expect(conversation).toEqual(before);
  });

  it("restoreArguments puts the real URLs back into tool-call arguments, as valid JSON", () => {
    const window = windowOf();
    window.build(SYSTEM, conversation);
    const restored = window.restoreArguments(call("c2", { url: "[url:2]", also: ["[url:1]", "see [url:1]."], unknown: "[url:9]" }));
    expect(restored.id).toBe("c2");
    expect(restored.name).toBe("fetch");
    expect(JSON.parse(restored.arguments)).toEqual({ url: OTHER, also: [LONG, `see ${LONG}.`], unknown: "[url:9]" });
  });

  it("keeps each URL's number across builds, so a later round (or a replay) maps placeholders the same way", () => {
    const window = windowOf();
    window.build(SYSTEM, conversation);
    const later = window.build(SYSTEM, [
      ...conversation,
      { role: "user", content: `Now ${OTHER} first, then a new one: ${OTHER}/more-${"x".repeat(10)} and ${LONG}` },
    ]);
    expect(later.at(-1)).toEqual({ role: "user", content: "Now [url:2] first, then a new one: [url:3] and [url:1]" });
    expect(JSON.parse(window.restoreArguments(call("c3", { url: "[url:3]" })).arguments)).toEqual({
      url: `${OTHER}/more-${"x".repeat(10)}`,
    });

    // A new window (a retried step) that builds the same conversation gets the same numbers.
    const replay = windowOf();
    expect(replay.build(SYSTEM, conversation)).toEqual(windowOf().build(SYSTEM, conversation));
    expect(replay.restoreArguments(call("c2", { url: "[url:2]" })).arguments).toBe(JSON.stringify({ url: OTHER }));
  });

  it("leaves arguments alone when no URL was compressed", () => {
    const window = windowOf();
    window.build("system", [{ role: "user", content: `only ${SHORT}` }]);
    const original = call("c1", '{"url": "[url:1]"}');
    expect(window.restoreArguments(original)).toBe(original);
  });
});

describe("ContextWindow: token budget", () => {
  const filler = (k: number) => `Turn ${k}: ${Array.from({ length: 60 }, (_, i) => `word${k}x${i}`).join(" ")}`;
  const history: ChatMessage[] = [1, 2, 3].flatMap((k) => [
    { role: "user", content: filler(k) },
    { role: "assistant", content: `Answer ${k}.` },
  ]);
  const current: ChatMessage = { role: "user", content: "And now?" };
  const tools: ToolSpec[] = agentTools().specs();
  const toolTokens = counter.count(JSON.stringify(tools));
  const full = counter.countMessages([{ role: "system", content: SYSTEM }, ...history, current]);
  const users = (prompt: ChatMessage[]) => prompt.filter((m) => m.role === "user").map((m) => m.content);

  it("keeps everything that fits", () => {
    expect(windowOf(full).build(SYSTEM, [...history, current])).toEqual([{ role: "system", content: SYSTEM }, ...history, current]);
  });

  it("counts the tool definitions against the budget: with tools, the same budget keeps fewer turns", () => {
    expect(toolTokens).toBeGreaterThan(counter.countMessages([history[0]!]));
    const prompt = windowOf(full).build(SYSTEM, [...history, current], tools);
    expect(prompt.length).toBeLessThan(history.length + 2);
    expect(prompt[0]).toEqual({ role: "system", content: SYSTEM });
    expect(prompt.at(-1)).toEqual(current);
    expect(users(prompt)).not.toContain(filler(1)); // the oldest goes first
    // Room for the tools as well keeps everything again.
    expect(windowOf(full + toolTokens).build(SYSTEM, [...history, current], tools)).toHaveLength(history.length + 2);
  });

  it("drops the oldest whole turns first and keeps the newest, never an answer without its question", () => {
    const newestTurn = counter.countMessages(history.slice(4)) - counter.countMessages([]);
    const fixed = counter.countMessages([{ role: "system", content: SYSTEM }, current]);
    // Room for the newest turn and the answer before it, but not that answer's question.
    const answerBefore = counter.countMessages([history[3]!]) - counter.countMessages([]);
    const prompt = windowOf(fixed + newestTurn + answerBefore).build(SYSTEM, [...history, current]);
    expect(prompt).toEqual([{ role: "system", content: SYSTEM }, history[4], history[5], current]);
  });

  it("always keeps the system prompt and the current request, even over budget", () => {
    const prompt = windowOf(10).build(SYSTEM, [...history, current], tools);
    expect(prompt).toEqual([{ role: "system", content: SYSTEM }, current]);
  });

  it("measures a prompt as the model's tokenizer does", () => {
    const window = windowOf();
    const messages: ChatMessage[] = [{ role: "system", content: SYSTEM }, current];
    expect(window.countTokens(messages)).toBe(counter.countMessages(messages));
    expect(window.countTokens(messages)).toBeGreaterThan(counter.count(SYSTEM));
  });
});
