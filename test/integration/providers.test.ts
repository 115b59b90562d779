import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/contracts/events.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { ANSWER, PROVIDERS } from "../support/providerFixtures.js";
import { type ScriptedModel, type ScriptedRequest, startScriptedModel } from "../support/scriptedModel.js";

/**
 * Real providers' streamed replies, replayed through the real `openai` client and the whole local
 * stack: OpenAI, Azure OpenAI, DeepSeek, Qwen through vLLM and DashScope, Ollama, and Anthropic's
 * and Gemini's OpenAI-compatible endpoints. Each run calls the calculator twice and answers: the
 * tool calls are rebuilt whatever the shape (ids missing or repeated, arguments split anywhere,
 * whole calls without an index, finish reasons that differ), usage is counted when reported, and
 * reasoning is shown as agent.reasoning but never sent back.
 */
let model: ScriptedModel;
let stack: RunningStack;
let client: Client;

const text = (content: unknown) => (typeof content === "string" ? content : JSON.stringify(content ?? ""));
const providerOf = (request: ScriptedRequest) =>
  /\[\[([\w-]+)\]\]/.exec(text(request.messages.find((m) => m.role === "user")?.content))?.[1];

beforeAll(async () => {
  model = await startScriptedModel((request) => {
    // The first model is down for the fallback scenario; the fallback model answers.
    if (providerOf(request) === "fallback")
      return request.model === "fallback-model" ? { text: "Answered by the fallback model." } : { status: 503 };
    const fixture = PROVIDERS[providerOf(request) ?? ""];
    if (!fixture) return { status: 400, message: "no fixture for this request" };
    const answered = request.messages.at(-1)?.role === "tool";
    return { chunks: (answered ? fixture.answer : fixture.toolCalls) as ChatCompletionChunk[] };
  });
  stack = await startStack(
    { OPENAI_BASE_URL: model.url, STEPWISE_MODEL: "provider-model", STEPWISE_FALLBACK_MODEL: "fallback-model", LLM_MAX_RETRIES: "1" },
    [],
  );
  client = new Client(stack.url, stack.apiKey);
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  await model?.close();
});

describe("a fallback model", { timeout: 120_000 }, () => {
  it("answers when the first model stays unavailable after its retries, and the run's usage counts it", async () => {
    const from = model.requests.length;
    const { runId } = await client.submit({ input: "[[fallback]] Say something.", mode: "react" });
    const run = await client.waitFor(runId, undefined, 90_000);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.result).toBe("Answered by the fallback model.");
    expect(run.usage).toMatchObject({ llmCalls: 1, fallbackCalls: 1 });
    expect(model.requests.slice(from).map((r) => r.model)).toEqual(["provider-model", "provider-model", "fallback-model"]);
  });
});

describe("providers' stream shapes end in correct runs", { timeout: 120_000 }, () => {
  it.each(Object.entries(PROVIDERS).map(([name, fixture]) => [name, fixture.traits, fixture] as const))(
    "%s (%s)",
    async (name, _traits, fixture) => {
      const from = model.requests.length;
      const { runId } = await client.submit({ input: `[[${name}]] What is 17*23, and 2+2?`, mode: "react" });
      const { run, events } = await client.waitForEnd(runId, 90_000);
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      expect(run.result).toBe(ANSWER);

      const of = <T extends RunEvent["type"]>(type: T) => events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
      expect(of("tool.called").map((e) => e.data.arguments)).toEqual([{ expression: "17*23" }, { expression: "2+2" }]);
      expect(of("tool.result").map((e) => [e.data.ok, e.data.output])).toEqual([
        [true, expect.stringContaining("391")],
        [true, expect.stringContaining("4")],
      ]);
      // The answer streamed as the agent's deltas, whole.
      expect(
        of("agent.delta")
          .map((e) => e.data.text)
          .join(""),
      ).toContain(ANSWER);

      const requests = model.requests.slice(from);
      expect(requests).toHaveLength(2);
      // Each call's result answers its own call: ids unique, whatever the provider sent.
      const second = requests[1]!.messages;
      const calls = (second.findLast((m) => m.role === "assistant") as { tool_calls: { id: string }[] }).tool_calls;
      const answeredIds = second.filter((m) => m.role === "tool").map((m) => (m as { tool_call_id: string }).tool_call_id);
      expect(new Set(calls.map((c) => c.id)).size).toBe(2);
      expect(answeredIds).toEqual(calls.map((c) => c.id));
      // Nothing a provider may not support: no parallel_tool_calls; the output limit as max_tokens on a compatible server.
      for (const request of requests) {
        expect(request).not.toHaveProperty("parallel_tool_calls");
        expect(request).toMatchObject({ max_tokens: 8192, stream: true });
      }

      if (fixture.promptTokens !== undefined) expect(run.usage.promptTokens).toBe(fixture.promptTokens);
      else expect(run.usage.llmCalls).toBe(2);
      if (fixture.reasoning) {
        expect(
          of("agent.reasoning")
            .map((e) => e.data.text)
            .join(""),
        ).toBe(fixture.reasoning);
        expect(of("agent.reasoning").every((e) => e.data.agent === "react")).toBe(true);
        // Reasoning is shown, never fed back: the next request does not carry it.
        expect(JSON.stringify(requests[1])).not.toContain(fixture.reasoning.slice(0, 20));
      } else {
        expect(of("agent.reasoning")).toEqual([]);
      }
    },
  );
});
