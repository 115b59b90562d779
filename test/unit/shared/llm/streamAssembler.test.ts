import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { StreamAssembler } from "../../../../shared/llm/streamAssembler.js";

type Delta = ChatCompletionChunk.Choice.Delta;
type ToolDelta = NonNullable<Delta["tool_calls"]>[number];

/** A chunk as OpenAI-compatible servers send it; `delta` may be null (some servers do that). */
function chunk(delta: Delta | null, finishReason: ChatCompletionChunk.Choice["finish_reason"] = null): ChatCompletionChunk {
  return {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [{ index: 0, delta: delta as Delta, finish_reason: finishReason, logprobs: null }],
  };
}

const toolDelta = (index: number, part: Omit<ToolDelta, "index">): Delta => ({ tool_calls: [{ index, ...part }] });

function usageChunk(prompt: number, completion: number): ChatCompletionChunk {
  return {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

function assemble(chunks: ChatCompletionChunk[]) {
  const assembler = new StreamAssembler();
  const texts = chunks.map((c) => assembler.push(c).text);
  return { result: assembler.result(), texts };
}

const ARGS = JSON.stringify({ expression: "(120/8)+2^5", note: 'unicode ✓ "quoted" \\ and \n newline' });

describe("StreamAssembler", () => {
  it("reassembles tool-call arguments split at every position, exactly", () => {
    for (let cut = 0; cut <= ARGS.length; cut++) {
      const { result } = assemble([
        chunk({ role: "assistant", content: null }),
        chunk(toolDelta(0, { id: "call_1", type: "function", function: { name: "calculator", arguments: "" } })),
        chunk(toolDelta(0, { function: { arguments: ARGS.slice(0, cut) } })),
        chunk(toolDelta(0, { function: { arguments: ARGS.slice(cut) } })),
        chunk({}, "tool_calls"),
      ]);
      expect(result.toolCalls, `cut at ${cut}`).toEqual([{ id: "call_1", name: "calculator", arguments: ARGS }]);
      expect(JSON.parse(result.toolCalls[0]!.arguments)).toEqual(JSON.parse(ARGS));
    }
  });

  it("reassembles arguments streamed one character per chunk", () => {
    const { result } = assemble([
      chunk(toolDelta(0, { id: "call_1", type: "function", function: { name: "calculator" } })),
      ...[...ARGS].map((ch) => chunk(toolDelta(0, { function: { arguments: ch } }))),
      chunk({}, "tool_calls"),
    ]);
    expect(result.toolCalls).toEqual([{ id: "call_1", name: "calculator", arguments: ARGS }]);
    expect(result.finishReason).toBe("tool_calls");
  });

  it("survives a first chunk with a null delta, an empty delta, and null fields (JD Genie broke here)", () => {
    const { result, texts } = assemble([
      chunk(null),
      chunk({}),
      chunk({ role: "assistant", content: null, tool_calls: null as never }),
      chunk({ content: "" }),
      chunk(toolDelta(0, { id: "call_1", type: "function", function: { name: "calculator", arguments: null as never } })),
      chunk(toolDelta(0, { id: null as never, function: { name: null as never, arguments: '{"expression":"1+1"}' } })),
      chunk(null, "tool_calls"),
    ]);
    expect(texts.every((t) => t === "")).toBe(true);
    expect(result).toEqual({
      content: null,
      toolCalls: [{ id: "call_1", name: "calculator", arguments: '{"expression":"1+1"}' }],
      finishReason: "tool_calls",
      usage: { promptTokens: 0, completionTokens: 0 },
    });
  });

  it("takes the id when it arrives in a later chunk than the name and arguments", () => {
    const { result } = assemble([
      chunk(toolDelta(0, { function: { name: "calculator", arguments: '{"expre' } })),
      chunk(toolDelta(0, { function: { arguments: 'ssion":"2*3"}' } })),
      chunk(toolDelta(0, { id: "call_late" })),
      chunk({}, "tool_calls"),
    ]);
    expect(result.toolCalls).toEqual([{ id: "call_late", name: "calculator", arguments: '{"expression":"2*3"}' }]);
  });

  it("gives a call without any id a stable one, so tool results can still be matched", () => {
    const { result } = assemble([chunk(toolDelta(0, { function: { name: "calculator", arguments: "{}" } }))]);
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]!.id).toBeTruthy();
  });

  it("keeps two interleaved tool calls apart by index, in index order", () => {
    const a = '{"expression":"17*23"}';
    const b = '{"text":"hello world"}';
    const { result } = assemble([
      chunk(toolDelta(1, { id: "call_b", type: "function", function: { name: "text_stats", arguments: "" } })),
      chunk(toolDelta(0, { id: "call_a", type: "function", function: { name: "calculator", arguments: "" } })),
      chunk(toolDelta(1, { function: { arguments: b.slice(0, 5) } })),
      chunk(toolDelta(0, { function: { arguments: a.slice(0, 9) } })),
      chunk(toolDelta(1, { function: { arguments: b.slice(5) } })),
      chunk(toolDelta(0, { function: { arguments: a.slice(9) } })),
      chunk({}, "tool_calls"),
    ]);
    expect(result.toolCalls).toEqual([
      { id: "call_a", name: "calculator", arguments: a },
      { id: "call_b", name: "text_stats", arguments: b },
    ]);
  });

  it("two calls delivered in one chunk", () => {
    const { result } = assemble([
      chunk({
        tool_calls: [
          { index: 0, id: "c0", type: "function", function: { name: "calculator", arguments: '{"expression":"1"}' } },
          { index: 1, id: "c1", type: "function", function: { name: "calculator", arguments: '{"expression":"2"}' } },
        ],
      }),
    ]);
    expect(result.toolCalls.map((c) => [c.id, c.arguments])).toEqual([
      ["c0", '{"expression":"1"}'],
      ["c1", '{"expression":"2"}'],
    ]);
  });

  it("reads usage from a final chunk with empty choices", () => {
    const { result, texts } = assemble([chunk({ role: "assistant", content: "Hel" }), chunk({ content: "lo" }, "stop"), usageChunk(12, 3)]);
    expect(texts).toEqual(["Hel", "lo", ""]);
    expect(result).toEqual({ content: "Hello", toolCalls: [], finishReason: "stop", usage: { promptTokens: 12, completionTokens: 3 } });
  });

  it("text and tool calls in the same response are both kept", () => {
    const { result } = assemble([
      chunk({ content: "Let me compute that." }),
      chunk(toolDelta(0, { id: "c", type: "function", function: { name: "calculator", arguments: '{"expression":"2+2"}' } })),
      chunk({}, "tool_calls"),
      usageChunk(5, 7),
    ]);
    expect(result.content).toBe("Let me compute that.");
    expect(result.toolCalls).toEqual([{ id: "c", name: "calculator", arguments: '{"expression":"2+2"}' }]);
    expect(result.usage).toEqual({ promptTokens: 5, completionTokens: 7 });
  });

  it("ignores choices other than the first", () => {
    const assembler = new StreamAssembler();
    assembler.push({
      ...chunk({ content: "first" }),
      choices: [
        { index: 0, delta: { content: "first" }, finish_reason: null, logprobs: null },
        { index: 1, delta: { content: "second" }, finish_reason: null, logprobs: null },
      ],
    });
    expect(assembler.result().content).toBe("first");
  });

  it("an empty stream is an empty answer, not a crash", () => {
    expect(new StreamAssembler().result()).toEqual({
      content: null,
      toolCalls: [],
      finishReason: null,
      usage: { promptTokens: 0, completionTokens: 0 },
    });
  });
});
