import OpenAI from "openai";
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { afterEach, describe, expect, it } from "vitest";
import { tokenCounterFor } from "../../../../shared/memory/tokens.js";
import { type ScriptedModel, type ScriptStep, startScriptedModel } from "../../../support/scriptedModel.js";
import {
  type ProviderLimits,
  REASONING_NOT_PASSED_BACK,
  type StrictProvider,
  startStrictProvider,
} from "../../../support/strictProvider.js";

// The stand-in is driven through the real `openai` client, as Stepwise drives providers: each
// refusal is the provider's status, code and wording, and a refused request never reaches the
// server behind it.

let scripted: ScriptedModel | undefined;
let strict: StrictProvider | undefined;
afterEach(async () => {
  await strict?.close();
  await scripted?.close();
  strict = scripted = undefined;
});

async function provider(limits: ProviderLimits, steps: ScriptStep[] = [{ text: "Fine." }]) {
  scripted = await startScriptedModel(steps);
  strict = await startStrictProvider(scripted.url, limits);
  return new OpenAI({ baseURL: strict.url, apiKey: "test", maxRetries: 0 });
}

type Body = Omit<ChatCompletionCreateParamsStreaming, "model" | "stream"> & Record<string, unknown>;

/** Streams one request to the end: the deltas, the finish reason and the usage. */
async function send(client: OpenAI, body: Body) {
  const stream = await client.chat.completions.create({ model: "gpt-4o", stream: true, stream_options: { include_usage: true }, ...body });
  let text = "";
  let reasoning = "";
  let args = "";
  let finish: string | null = null;
  let usage: ChatCompletionChunk["usage"];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta as (ChatCompletionChunk.Choice.Delta & { reasoning_content?: string }) | undefined;
    text += delta?.content ?? "";
    reasoning += delta?.reasoning_content ?? "";
    args += delta?.tool_calls?.map((c) => c.function?.arguments ?? "").join("") ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
    usage = chunk.usage ?? usage;
  }
  return { text, reasoning, args, finish, usage };
}

/** The refusal a request gets: the client's APIError. */
async function refused(client: OpenAI, body: Body): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await send(client, body).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

const tool = (i: number) => ({
  type: "function" as const,
  function: { name: `tool_${i}`, description: `Tool number ${i}.`, parameters: { type: "object", properties: {} } },
});
const callTurn = (ids: string[], extra: object = {}) => ({
  role: "assistant" as const,
  content: null,
  tool_calls: ids.map((id) => ({ id, type: "function" as const, function: { name: "tool_1", arguments: "{}" } })),
  ...extra,
});

describe("the strict provider stand-in", () => {
  it("refuses a prompt over the window with OpenAI's context_length_exceeded, naming the window and the size", async () => {
    const client = await provider({ windowTokens: 1_000 });
    const long = "word ".repeat(1_500);
    const error = await refused(client, { messages: [{ role: "user", content: long }], max_tokens: 100 });
    const prompt = tokenCounterFor("gpt-4o").countMessages([{ role: "user", content: long }]);
    expect(error.status).toBe(400);
    expect(error.code).toBe("context_length_exceeded");
    expect(error.param).toBe("messages");
    expect(error.message).toContain(`maximum context length is 1000 tokens. However, you requested ${prompt + 100} tokens`);
    expect(scripted!.requests).toHaveLength(0);
    // The same prompt fits a larger window and is answered.
    await strict!.close();
    strict = await startStrictProvider(scripted!.url, { windowTokens: prompt + 100 });
    const ok = await send(new OpenAI({ baseURL: strict.url, apiKey: "test", maxRetries: 0 }), {
      messages: [{ role: "user", content: long }],
      max_tokens: 100,
    });
    expect(ok.text).toBe("Fine.");
  });

  it("refuses more than 128 tools as OpenAI does (array_above_max_length) and takes 128", async () => {
    const client = await provider({}, [{ text: "Fine." }]);
    const tools = Array.from({ length: 129 }, (_, i) => tool(i));
    const error = await refused(client, { messages: [{ role: "user", content: "hi" }], tools });
    expect([error.status, error.code, error.param]).toEqual([400, "array_above_max_length", "tools"]);
    expect(error.message).toContain(
      "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 129",
    );
    expect((await send(client, { messages: [{ role: "user", content: "hi" }], tools: tools.slice(1) })).text).toBe("Fine.");
  });

  it("refuses an output limit above the model's maximum, in OpenAI's and DeepSeek's wording", async () => {
    const client = await provider({ maxOutputTokens: 4_096 });
    const error = await refused(client, { messages: [{ role: "user", content: "hi" }], max_completion_tokens: 8_192 });
    expect([error.status, error.param]).toEqual([400, "max_completion_tokens"]);
    expect(error.message).toContain("max_tokens is too large: 8192. This model supports at most 4096 completion tokens");
    await strict!.close();
    strict = await startStrictProvider(scripted!.url, { kind: "deepseek-v4", maxOutputTokens: 4_096 });
    const deepseek = await refused(new OpenAI({ baseURL: strict.url, apiKey: "test", maxRetries: 0 }), {
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 8_192,
    });
    expect(deepseek.message).toContain("the valid range of max_tokens is [1, 4096]");
  });

  it("refuses tool calls without their tool messages, and tool messages without a call", async () => {
    const client = await provider({});
    const missing = await refused(client, {
      messages: [{ role: "user", content: "hi" }, callTurn(["call_a", "call_b"]), { role: "tool", tool_call_id: "call_a", content: "1" }],
      tools: [tool(1)],
    });
    expect(missing.status).toBe(400);
    expect(missing.message).toContain(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_b",
    );
    const orphan = await refused(client, {
      messages: [
        { role: "user", content: "hi" },
        { role: "tool", tool_call_id: "call_x", content: "1" },
      ],
    });
    expect([orphan.status, orphan.param]).toEqual([400, "messages.[1].role"]);
    expect(orphan.message).toContain("messages with role 'tool' must be a response to a preceeding message with 'tool_calls'");
    // A user message between a call and its result breaks the pairing too.
    const interrupted = await refused(client, {
      messages: [
        { role: "user", content: "hi" },
        callTurn(["call_a"]),
        { role: "user", content: "and?" },
        { role: "tool", tool_call_id: "call_a", content: "1" },
      ],
    });
    expect(interrupted.status).toBe(400);
    expect(scripted!.requests).toHaveLength(0);
  });

  it("as DeepSeek V4 in thinking mode: streams reasoning, and refuses a tool-call turn sent back without its reasoning_content", async () => {
    const client = await provider({ kind: "deepseek-v4" }, [
      { toolCalls: [{ name: "tool_1", arguments: {}, id: "call_a" }] },
      { text: "Done." },
      { text: "Done without thinking." },
      { text: "Plain." },
    ]);
    const first = await send(client, { messages: [{ role: "user", content: "hi" }], tools: [tool(1)] });
    expect(first.reasoning).toContain("Thinking about request 1");
    const history = [
      { role: "user" as const, content: "hi" },
      callTurn(["call_a"]),
      { role: "tool" as const, tool_call_id: "call_a", content: "1" },
    ];
    const error = await refused(client, { messages: history, tools: [tool(1)] });
    expect([error.status, error.message]).toEqual([400, `400 ${REASONING_NOT_PASSED_BACK}`]);
    const withReasoning = [history[0], callTurn(["call_a"], { reasoning_content: first.reasoning }), history[2]];
    expect((await send(client, { messages: withReasoning, tools: [tool(1)] })).text).toBe("Done.");
    // With thinking switched off (DeepSeek's own request field) the rule does not apply.
    expect((await send(client, { messages: history, tools: [tool(1)], thinking: { type: "disabled" } })).text).toBe(
      "Done without thinking.",
    );
    // A turn without tool calls needs no reasoning back.
    const plain = [history[0], { role: "assistant" as const, content: "Earlier answer." }, { role: "user" as const, content: "more" }];
    expect((await send(client, { messages: plain })).text).toBe("Plain.");
  });

  it("cuts a reply at the output limit with finish_reason length and reports the limit as its completion tokens", async () => {
    const long = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");
    const client = await provider({ maxOutputTokens: 4_000 }, [
      { text: long },
      { toolCalls: [{ name: "tool_1", arguments: { text: long } }] },
      { text: "Short." },
    ]);
    const cut = await send(client, { messages: [{ role: "user", content: "write" }], max_tokens: 50 });
    expect(cut.finish).toBe("length");
    expect(long.startsWith(cut.text)).toBe(true);
    expect(cut.text.length).toBeLessThan(long.length);
    expect(cut.usage?.completion_tokens).toBe(50);
    expect(tokenCounterFor("gpt-4o").count(cut.text)).toBeLessThanOrEqual(50);
    const args = await send(client, { messages: [{ role: "user", content: "call" }], tools: [tool(1)], max_tokens: 40 });
    expect(args.finish).toBe("length");
    expect(() => JSON.parse(args.args)).toThrow();
    const whole = await send(client, { messages: [{ role: "user", content: "short" }], max_tokens: 50 });
    expect([whole.text, whole.finish]).toEqual(["Short.", "stop"]);
    expect(strict!.requests.map((r) => r.cut)).toEqual([true, true, false]);
  });

  it("cuts at the model's own maximum when the request sets no limit", async () => {
    const long = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");
    const client = await provider({ maxOutputTokens: 30 }, [{ text: long }]);
    const cut = await send(client, { messages: [{ role: "user", content: "write" }] });
    expect([cut.finish, cut.usage?.completion_tokens]).toEqual(["length", 30]);
  });
});
