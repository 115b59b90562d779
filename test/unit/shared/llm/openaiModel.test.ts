import OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { afterEach, describe, expect, it } from "vitest";
import { OpenAIModel, type OpenAIModelOptions } from "../../../../shared/llm/openaiModel.js";
import type { ModelRetry, ToolSpec } from "../../../../shared/llm/types.js";
import { type Script, type ScriptedModel, startScriptedModel } from "../../../support/scriptedModel.js";

type Delta = ChatCompletionChunk.Choice.Delta;

const tools: ToolSpec[] = [
  {
    type: "function",
    function: { name: "calculator", description: "math", parameters: { type: "object", properties: { expression: { type: "string" } } } },
  },
];
const messages = [{ role: "user" as const, content: "What is 2+2?" }];
// Quotes, escapes, a newline, a BMP symbol and an astral one (a surrogate pair a split can cut).
const ARGS = JSON.stringify({ expression: "(120/8)+2^5", note: 'unicode ✓ 😀 "quoted" \\ and \n newline' });

function chunk(delta: Delta | null, finish: ChatCompletionChunk.Choice["finish_reason"] = null): ChatCompletionChunk {
  return {
    id: "chatcmpl-t",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [{ index: 0, delta: delta as Delta, finish_reason: finish, logprobs: null }],
  };
}
const toolDelta = (index: number, part: Omit<NonNullable<Delta["tool_calls"]>[number], "index">): Delta => ({
  tool_calls: [{ index, ...part }],
});
const usageChunk = (prompt: number, completion: number): ChatCompletionChunk => ({
  id: "chatcmpl-t",
  object: "chat.completion.chunk",
  created: 0,
  model: "m",
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
});

let server: ScriptedModel | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelFor(script: Script, options: Partial<OpenAIModelOptions> = {}): Promise<OpenAIModel> {
  server = await startScriptedModel(script);
  return new OpenAIModel({ model: "scripted", baseURL: server.url, apiKey: "test", maxRetries: 0, ...options });
}

describe("OpenAIModel over a scripted OpenAI-compatible server", () => {
  it("reassembles tool-call arguments split at every character position", async () => {
    // Request i streams the arguments cut at position i: the id and name with the first part, then the rest.
    const model = await modelFor((_request, i) => ({
      chunks: [
        chunk({
          role: "assistant",
          content: null,
          tool_calls: [{ index: 0, id: "call_x", type: "function", function: { name: "calculator", arguments: ARGS.slice(0, i) } }],
        }),
        chunk(toolDelta(0, { function: { arguments: ARGS.slice(i) } })),
        chunk({}, "tool_calls"),
      ],
    }));
    for (let position = 0; position <= ARGS.length; position++) {
      const response = await model.complete({ messages, tools });
      expect(response.toolCalls, `split at ${position}`).toEqual([{ id: "call_x", name: "calculator", arguments: ARGS }]);
      expect(response.finishReason).toBe("tool_calls");
    }
    expect(server!.requests).toHaveLength(ARGS.length + 1);
    expect(server!.requests[0]).toMatchObject({ stream: true, tool_choice: "auto", tools });
  });

  it.each([
    ["null", null],
    ["empty", {}],
  ])("survives a first chunk whose delta is %s (JD Genie #314)", async (_label, delta) => {
    const model = await modelFor([
      {
        chunks: [
          chunk(delta as Delta | null),
          chunk(toolDelta(0, { id: "call_1", type: "function", function: { name: "calculator", arguments: "" } })),
          chunk(toolDelta(0, { function: { arguments: '{"expression":' } })),
          chunk(toolDelta(0, { function: { arguments: '"2+2"}' } })),
          chunk({}, "tool_calls"),
        ],
      },
    ]);
    const response = await model.complete({ messages, tools });
    expect(response).toMatchObject({
      content: null,
      finishReason: "tool_calls",
      toolCalls: [{ id: "call_1", name: "calculator", arguments: '{"expression":"2+2"}' }],
    });
  });

  it("keeps two parallel tool calls apart when their deltas interleave by index", async () => {
    const model = await modelFor([
      {
        chunks: [
          chunk(toolDelta(0, { id: "call_a", type: "function", function: { name: "calculator", arguments: "" } })),
          chunk(toolDelta(1, { id: "call_b", type: "function", function: { name: "calc", arguments: '{"expr' } })),
          chunk(toolDelta(0, { function: { arguments: '{"expression":' } })),
          chunk(toolDelta(1, { function: { name: "ulator", arguments: 'ession":' } })),
          chunk(toolDelta(0, { function: { arguments: '"1+1"}' } })),
          chunk(toolDelta(1, { function: { arguments: '"2*3"}' } })),
          chunk({}, "tool_calls"),
        ],
      },
    ]);
    const response = await model.complete({ messages, tools });
    expect(response.toolCalls).toEqual([
      { id: "call_a", name: "calculator", arguments: '{"expression":"1+1"}' },
      { id: "call_b", name: "calculator", arguments: '{"expression":"2*3"}' },
    ]);
  });

  it("retries a 429 (the openai client's own retry) and returns the answer", async () => {
    const model = await modelFor([{ status: 429, retryAfter: 0 }, { text: "Four." }], { maxRetries: 2 });
    const response = await model.complete({ messages });
    expect(response).toMatchObject({ content: "Four.", toolCalls: [], finishReason: "stop" });
    expect(server!.requests).toHaveLength(2);
  });

  it("tells onRetry of each retry: its number, the reason and the wait (a server's Retry-After honoured)", async () => {
    const model = await modelFor([{ status: 429, retryAfter: 1 }, { status: 503 }, { text: "Four." }], { maxRetries: 3 });
    const retries: ModelRetry[] = [];
    const response = await model.complete({ messages, onRetry: (retry) => retries.push(retry) });
    expect(response.content).toBe("Four.");
    expect(retries).toEqual([
      { attempt: 1, retries: 3, reason: expect.stringContaining("answered 429"), waitMs: 1000 },
      { attempt: 2, retries: 3, reason: expect.stringContaining("answered 503"), waitMs: expect.any(Number) },
    ]);
    // The second wait is the backoff of a second retry: 1 s, less up to 25 %.
    expect(retries[1]!.waitMs).toBeGreaterThanOrEqual(750);
    expect(retries[1]!.waitMs).toBeLessThanOrEqual(1000);
  });

  it("tells onRetry when the endpoint cannot be reached, then fails with ModelUnavailable", async () => {
    const closed = await startScriptedModel([]);
    const url = closed.url;
    await closed.close();
    const model = new OpenAIModel({ model: "scripted", baseURL: url, apiKey: "test", maxRetries: 2 });
    const retries: ModelRetry[] = [];
    await expect(model.complete({ messages, onRetry: (retry) => retries.push(retry) })).rejects.toMatchObject({
      name: "Stepwise.ModelUnavailable",
      message: expect.stringContaining("could not be reached"),
    });
    expect(retries.map((r) => [r.attempt, r.reason])).toEqual([
      [1, "the model could not be reached (ECONNREFUSED)"],
      [2, "the model could not be reached (ECONNREFUSED)"],
    ]);
  });

  it("does not retry a 400, so onRetry is never told", async () => {
    const model = await modelFor([{ status: 400 }, { text: "never" }], { maxRetries: 2 });
    const retries: ModelRetry[] = [];
    await expect(model.complete({ messages, onRetry: (retry) => retries.push(retry) })).rejects.toMatchObject({
      name: "Stepwise.ModelRejected",
    });
    expect(retries).toEqual([]);
    expect(server!.requests).toHaveLength(1);
  });

  it("surfaces the error after a 500 on every attempt", async () => {
    const model = await modelFor([{ status: 500 }, { status: 500 }, { status: 500 }], { maxRetries: 2 });
    await expect(model.complete({ messages })).rejects.toMatchObject({
      name: "Stepwise.ModelUnavailable",
      cause: { status: 500 },
      message: expect.stringContaining("The server had an error"),
    });
    expect(server!.requests).toHaveLength(3);
  });

  it("records the usage from the final chunk", async () => {
    const model = await modelFor([{ text: "Four.", usage: { prompt_tokens: 42, completion_tokens: 7 } }]);
    const response = await model.complete({ messages });
    expect(response.usage).toEqual({ promptTokens: 42, completionTokens: 7 });
    expect(server!.requests[0]!.stream_options).toEqual({ include_usage: true });
  });

  it("records usage from a usage-only chunk after the finish chunk", async () => {
    const model = await modelFor([{ chunks: [chunk({ content: "Hi" }), chunk({}, "stop"), usageChunk(3, 1)] }]);
    const response = await model.complete({ messages });
    expect(response).toMatchObject({ content: "Hi", usage: { promptTokens: 3, completionTokens: 1 } });
  });

  it("passes every text delta to onText, in order", async () => {
    const deltas = ["The ", "answer", " is", " 4", ".", " ✓"];
    const model = await modelFor([{ text: deltas, slowMs: 5 }]);
    const seen: string[] = [];
    const response = await model.complete({ messages, onText: (delta) => seen.push(delta) });
    expect(seen).toEqual(deltas);
    expect(response.content).toBe(deltas.join(""));
  });

  it("times out when the server never answers", async () => {
    const model = await modelFor([{ hang: true }], { timeoutMs: 200 });
    await expect(model.complete({ messages })).rejects.toThrow(/timed out/i);
  });
});

describe("a reply that fails after it started", () => {
  const event = (c: ChatCompletionChunk) => `data: ${JSON.stringify(c)}\n\n`;
  const partial = event(chunk({ role: "assistant", content: "Half an ans" }));

  it.each([
    ["the connection drops mid-stream", { raw: partial, drop: true }, /broke off/],
    ["a chunk is not JSON", { raw: `${partial}data: {"choices": [{"delta": {"content": "wer\n\n` }, /not valid JSON/],
    ["a 200 that is an HTML page", { raw: "<html><body>Bad gateway</body></html>", contentType: "text/html" }, /not a stream of events/],
    ["the stream ends without a finish reason", { raw: `${partial}data: [DONE]\n\n` }, /ended before it was complete/],
    [
      "an error event inside the stream",
      { raw: `${partial}data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n` },
      /error event: overloaded/,
    ],
  ] as const)("%s: retried like a 429, the partial reply discarded", async (_name, fault, message) => {
    const model = await modelFor([fault, { text: "The whole answer." }], { maxRetries: 1 });
    const seen: string[] = [];
    const response = await model.complete({
      messages,
      onText: (t) => seen.push(`text:${t}`),
      onRetry: (r) => seen.push(`retry:${r.attempt}`),
    });
    expect(response.content).toBe("The whole answer.");
    expect(server!.requests).toHaveLength(2);
    // The retry is told after what the broken reply streamed (if anything), before the whole answer's text.
    expect(seen.slice(seen.indexOf("retry:1"))).toEqual(["retry:1", "text:The ", "text:whole ", "text:answer."]);
    // Once every retry fails the same way: a retryable ModelUnavailable a person can read.
    const failing = await modelFor([fault, fault], { maxRetries: 1 });
    await expect(failing.complete({ messages })).rejects.toMatchObject({
      name: "Stepwise.ModelUnavailable",
      message: expect.stringMatching(message),
    });
  });

  it("a reply that stalls mid-stream is cut after the timeout and retried", async () => {
    const model = await modelFor(
      [{ chunks: [chunk({ content: "Hel" }), chunk({ content: "lo" }), chunk({}, "stop")], slowMs: 400 }, { text: "Hello." }],
      { maxRetries: 1, timeoutMs: 150 },
    );
    expect((await model.complete({ messages })).content).toBe("Hello.");
  });
});

describe("reasoning models", () => {
  it("passes reasoning_content and reasoning to onReasoning and keeps them out of the response", async () => {
    const reasoning = (text: string) => chunk({ reasoning_content: text } as Delta);
    const model = await modelFor([
      { chunks: [reasoning("Let me think: "), chunk({ reasoning: "2+2 is 4." } as Delta), chunk({ content: "4" }), chunk({}, "stop")] },
    ]);
    const thoughts: string[] = [];
    const texts: string[] = [];
    const response = await model.complete({ messages, onText: (t) => texts.push(t), onReasoning: (t) => thoughts.push(t) });
    expect(thoughts.join("")).toBe("Let me think: 2+2 is 4.");
    expect(texts).toEqual(["4"]);
    expect(JSON.stringify(response)).not.toContain("think");
  });
});

describe("the scripted server without streaming", () => {
  it("answers a non-streaming request with a whole completion", async () => {
    server = await startScriptedModel([
      { text: "Let me check.", toolCalls: [{ name: "calculator", arguments: { expression: "2+2" } }] },
      { status: 400, message: "bad" },
    ]);
    const client = new OpenAI({ baseURL: server.url, apiKey: "test", maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: "scripted", messages });
    expect(completion.choices[0]).toMatchObject({
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: "Let me check.",
        tool_calls: [{ id: "call_0_0", type: "function", function: { name: "calculator", arguments: '{"expression":"2+2"}' } }],
      },
    });
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    await expect(client.chat.completions.create({ model: "scripted", messages })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("bad"),
    });
    await expect(client.chat.completions.create({ model: "scripted", messages })).rejects.toThrow(/request #3 has none/);
  });
});
