import { afterEach, describe, expect, it } from "vitest";
import { AgentError } from "../../../../shared/errors.js";
import { contractPrompt, parseContractReply } from "../../../../shared/llm/jsonContract.js";
import { JsonContractModel } from "../../../../shared/llm/jsonContractModel.js";
import { OpenAIModel } from "../../../../shared/llm/openaiModel.js";
import type { ChatMessage, ToolSpec } from "../../../../shared/llm/types.js";
import { type Script, type ScriptedModel, startScriptedModel } from "../../../support/scriptedModel.js";

const calculatorParameters = { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] };
const tools: ToolSpec[] = [
  { type: "function", function: { name: "calculator", description: "Evaluates arithmetic.", parameters: calculatorParameters } },
  { type: "function", function: { name: "text_stats", description: "Counts words." } },
];
const CONTRACT = contractPrompt([
  { name: "calculator", description: "Evaluates arithmetic.", parameters: calculatorParameters },
  { name: "text_stats", description: "Counts words.", parameters: { type: "object", properties: {} } },
]);
const question: ChatMessage[] = [
  { role: "system", content: "You are a helpful agent." },
  { role: "user", content: "What is 2+2?" },
];
const CALL = '{"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+2"}}]}';
const GARBAGE = "Sure! I will use the calculator: {tool_calls: [calculator(2+2)]} and tell you.";

let server: ScriptedModel | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelFor(script: Script): Promise<JsonContractModel> {
  server = await startScriptedModel(script);
  return new JsonContractModel(new OpenAIModel({ model: "no-tools-7b", baseURL: server.url, apiKey: "test", maxRetries: 0 }));
}

const sent = (i: number) => server!.requests[i]!;

describe("JsonContractModel", () => {
  it("sends the contract instead of tools and turns a JSON tool call into a native one", async () => {
    const model = await modelFor([{ malformed: CALL }]);
    const response = await model.complete({ messages: question, tools });
    expect(response).toMatchObject({
      content: null,
      finishReason: "tool_calls",
      toolCalls: [{ id: "call_0_0", name: "calculator", arguments: '{"expression":"2+2"}' }],
    });
    expect(sent(0)).not.toHaveProperty("tools");
    expect(sent(0)).not.toHaveProperty("tool_choice");
    expect(sent(0).messages).toEqual([{ role: "system", content: `You are a helpful agent.\n\n${CONTRACT}` }, question[1]]);
  });

  it("recovers from a malformed reply: the correction carries the parser's error", async () => {
    const model = await modelFor([{ malformed: GARBAGE }, { malformed: `\`\`\`json\n${CALL}\n\`\`\`` }]);
    const response = await model.complete({ messages: question, tools });
    expect(response.toolCalls).toEqual([{ id: "call_0_0", name: "calculator", arguments: '{"expression":"2+2"}' }]);
    expect(response.finishReason).toBe("tool_calls");

    const parserError = (parseContractReply(GARBAGE) as { ok: false; error: string }).error;
    expect(parserError).toContain("not valid JSON");
    const retry = sent(1).messages;
    expect(retry.slice(0, 2)).toEqual(sent(0).messages);
    expect(retry.slice(2)).toEqual([
      { role: "assistant", content: GARBAGE },
      { role: "user", content: parserError },
    ]);
    expect(parserError).toMatch(/Reply again with exactly one JSON object/);
  });

  it("fails with json_contract_failed after three malformed replies in a row", async () => {
    const model = await modelFor([{ malformed: GARBAGE }, { malformed: "I think the answer is 4." }, { malformed: '{"result": 4}' }]);
    const failure = await model.complete({ messages: question, tools }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AgentError);
    expect(failure).toMatchObject({ code: "json_contract_failed" });
    expect((failure as AgentError).message).toMatch(
      /^The model did not follow the JSON contract 3 times in a row: .*neither "tool_calls" nor "answer" \(its keys: result\)/,
    );
    expect(server!.requests).toHaveLength(3);
    // Each correction is on top of the previous ones: 2 original messages + 2 per failure.
    expect(sent(2).messages).toHaveLength(6);
  });

  it("rewrites tool calls and tool results in the history as plain messages", async () => {
    const history: ChatMessage[] = [
      ...question,
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "calculator", arguments: '{"expression":"2+2"}' } },
          { id: "call_b", type: "function", function: { name: "text_stats", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "4" },
      { role: "tool", tool_call_id: "call_b", content: [{ type: "text", text: "0 words" }] },
    ];
    const model = await modelFor([{ malformed: '{"answer": "2+2 is 4."}' }]);
    const response = await model.complete({ messages: history, tools });
    expect(response).toMatchObject({ content: "2+2 is 4.", toolCalls: [], finishReason: "stop" });

    const messages = sent(0).messages;
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(messages.some((m) => "tool_calls" in m || "tool_call_id" in m)).toBe(false);
    expect(JSON.parse(messages[2]!.content as string)).toEqual({
      tool_calls: [
        { name: "calculator", arguments: { expression: "2+2" } },
        { name: "text_stats", arguments: {} },
      ],
    });
    // The way the model was asked to write calls is the way its history shows them.
    expect(parseContractReply(messages[2]!.content as string).ok).toBe(true);
    expect(messages[3]).toEqual({ role: "user", content: "Result of calculator (call_a): 4\n\nResult of text_stats (call_b): 0 words" });
  });

  it("returns an answer as content, passing it to onText once and never the raw JSON", async () => {
    const model = await modelFor([{ text: ['{"answer": ', '"It is 4."}'], usage: { prompt_tokens: 100, completion_tokens: 9 } }]);
    const seen: string[] = [];
    const response = await model.complete({ messages: question, tools, onText: (delta) => seen.push(delta) });
    expect(response).toEqual({
      content: "It is 4.",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 100, completionTokens: 9 },
    });
    expect(seen).toEqual(["It is 4."]);
  });

  it("sums usage over every attempt", async () => {
    const model = await modelFor([
      { malformed: GARBAGE, usage: { prompt_tokens: 100, completion_tokens: 20 } },
      { malformed: CALL, usage: { prompt_tokens: 130, completion_tokens: 15 } },
    ]);
    const response = await model.complete({ messages: question, tools });
    expect(response.usage).toEqual({ promptTokens: 230, completionTokens: 35 });
  });

  it("adds a system message when there is none, and numbers calls by turn so retries repeat the same ids", async () => {
    const reply = '{"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}, {"name": "text_stats"}]}';
    const model = await modelFor(() => ({ malformed: reply }));
    const later: ChatMessage[] = [
      { role: "user", content: "Go." },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_0_0", type: "function", function: { name: "calculator", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_0_0", content: "error: no expression" },
    ];
    const first = await model.complete({ messages: later, tools });
    const again = await model.complete({ messages: later, tools });
    expect(first.toolCalls.map((c) => c.id)).toEqual(["call_1_0", "call_1_1"]);
    expect(again.toolCalls).toEqual(first.toolCalls);
    expect(first.toolCalls[1]!.arguments).toBe("{}");
    expect(sent(0).messages[0]).toEqual({ role: "system", content: CONTRACT });
  });

  it("passes a request without tools straight through, streaming included", async () => {
    const model = await modelFor([{ text: ["Hello", " there"] }]);
    const seen: string[] = [];
    const response = await model.complete({ messages: question, onText: (delta) => seen.push(delta) });
    expect(response.content).toBe("Hello there");
    expect(seen).toEqual(["Hello", " there"]);
    expect(sent(0).messages).toEqual(question);
  });

  it("still rewrites tool turns for a request without tools, leaving plain answers as they are", async () => {
    const model = await modelFor([{ text: "Summary." }]);
    await model.complete({
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello!" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "calculator", arguments: "not json" } }],
        },
        { role: "tool", tool_call_id: "c1", content: "4" },
      ],
    });
    expect(sent(0).messages).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello!" },
      { role: "assistant", content: '{"tool_calls":[{"name":"calculator","arguments":"not json"}]}' },
      { role: "user", content: "Result of calculator (c1): 4" },
    ]);
  });
});
