import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { CUT_TOOL_CALL, runAgentLoop } from "../../../../shared/agent/loop.js";
import { OpenAIModel } from "../../../../shared/llm/openaiModel.js";
import { CONTINUE_CUT_REPLY, MAX_CONTINUATIONS, overlap, withOutputLimit } from "../../../../shared/llm/outputLimit.js";
import { RoleModel } from "../../../../shared/llm/roleModel.js";
import type { RoleSettings } from "../../../../shared/llm/roleSettings.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { defineTool } from "../../../../shared/tools/tool.js";
import { withRun } from "../../../support/memoryRun.js";
import { type Script, type ScriptedModel, type ScriptedRequest, startScriptedModel } from "../../../support/scriptedModel.js";
import { type ProviderLimits, type StrictProvider, startStrictProvider } from "../../../support/strictProvider.js";

// Replies meet the output limit through the real `openai` client and the strict stand-in, which
// cuts every reply at its limit with finish_reason "length" and refuses a limit above the model's.

let scripted: ScriptedModel;
let strict: StrictProvider;
afterEach(async () => {
  await strict?.close();
  await scripted?.close();
  (strict as unknown) = (scripted as unknown) = undefined;
});

async function start(script: Script, limits: ProviderLimits, roles?: RoleSettings) {
  scripted = await startScriptedModel(script);
  strict = await startStrictProvider(scripted.url, limits);
  return new RoleModel(withOutputLimit(new OpenAIModel({ model: "gpt-4o", baseURL: strict.url, apiKey: "k", maxRetries: 0 })), { roles });
}

const ANSWER = Array.from({ length: 120 }, (_, i) => `Row ${i + 1}: the value is ${(i + 1) * 7}.`).join("\n");

/** A model that writes ANSWER; asked to continue, it goes on from where the reply stopped, repeating its last words first (as models do). */
const writesAnswer: Script = (request: ScriptedRequest) => {
  const last = request.messages.at(-1);
  if (last?.role !== "user" || last.content !== CONTINUE_CUT_REPLY) return { text: ANSWER };
  const soFar = String(request.messages.at(-2)?.content ?? "");
  return { text: ANSWER.slice(Math.max(0, soFar.length - 25)) };
};

describe("replies cut at the output limit", () => {
  it("a cut answer is continued until whole; the parts join without repetition, and so do the streamed deltas", async () => {
    const model = await start(writesAnswer, {}, { default: { maxOutputTokens: 400 } });
    const deltas: string[] = [];
    const response = await model.complete({
      role: "react",
      messages: [{ role: "user", content: "List them." }],
      onText: (d) => deltas.push(d),
    });
    expect(response.content).toBe(ANSWER);
    expect(deltas.join("")).toBe(ANSWER);
    expect(response.finishReason).toBe("stop");
    const cuts = strict.requests.filter((r) => r.cut).length;
    expect(cuts).toBeGreaterThanOrEqual(2);
    expect(response.calls).toBe(strict.requests.length);
    expect(strict.requests.slice(1).every((r) => r.body.messages.at(-1).content === CONTINUE_CUT_REPLY)).toBe(true);
  });

  it("continues at most MAX_CONTINUATIONS times, then returns what it has, still marked cut", async () => {
    const model = await start(writesAnswer, {}, { default: { maxOutputTokens: 30 } });
    const response = await model.complete({ role: "summarizer", messages: [{ role: "user", content: "List them." }] });
    expect(strict.requests).toHaveLength(1 + MAX_CONTINUATIONS);
    expect(response.finishReason).toBe("length");
    expect(ANSWER.startsWith(response.content!)).toBe(true);
  });

  it("an output limit above the model's maximum is lowered to the maximum the provider names, and kept", async () => {
    const model = await start(() => ({ text: "Fine." }), { maxOutputTokens: 4_096 });
    expect((await model.complete({ role: "react", messages: [{ role: "user", content: "hi" }] })).content).toBe("Fine.");
    expect((await model.complete({ role: "planner", messages: [{ role: "user", content: "hi" }] })).content).toBe("Fine.");
    expect(strict.requests.map((r) => [r.body.max_tokens, r.refusal?.status])).toEqual([
      [8_192, 400],
      [4_096, undefined],
      [4_096, undefined],
    ]);
  });

  it("DeepSeek's wording of the same refusal is understood too", async () => {
    const model = await start(() => ({ text: "Fine." }), { kind: "deepseek-v4", maxOutputTokens: 2_048 });
    expect((await model.complete({ messages: [{ role: "user", content: "hi" }], settings: { maxOutputTokens: 9_000 } })).content).toBe(
      "Fine.",
    );
    expect(strict.requests.map((r) => r.body.max_tokens)).toEqual([9_000, 2_048]);
  });

  it("joins parts by the longest repeat only: a short coincidence is kept", () => {
    expect(overlap("the table ends with row 12 and", "row 12 and then row 13")).toBe(0);
    expect(overlap("…the value is 84.\nRow 13: the", "value is 84.\nRow 13: the value is 91.")).toBe("value is 84.\nRow 13: the".length);
  });
});

describe("a tool call cut at the output limit", () => {
  it("does not run: the model is told its reply was cut and sends a smaller call, which runs", async () => {
    const ran: string[] = [];
    const save = defineTool({
      name: "save",
      description: "Saves a text.",
      access: "read",
      parameters: z.object({ text: z.string() }),
      async run({ text }) {
        ran.push(text);
        return "saved";
      },
    });
    const model = await start(
      (request) => {
        const results = request.messages.filter((m) => m.role === "tool");
        if (results.length === 0) return { toolCalls: [{ name: "save", arguments: { text: ANSWER }, id: "call_big" }] };
        if (results.at(-1)?.content === CUT_TOOL_CALL)
          return { toolCalls: [{ name: "save", arguments: { text: "part 1" }, id: "call_small" }] };
        return { text: "Saved." };
      },
      {},
      { default: { maxOutputTokens: 200 } },
    );
    const { ports, runId } = await withRun({ status: "running" }, { model });
    const { journal, events, ...outcome } = await runAgentLoop(
      { runId, ports },
      {
        scope: "react",
        role: "react",
        system: () => "You are Stepwise, an AI agent.",
        conversation: [{ role: "user", content: "Save the table." }],
        tools: new ToolRegistry([save]),
        maxRounds: 5,
      },
    );
    await Promise.all([journal.flush(), events]);
    expect(outcome).toMatchObject({ kind: "answer", text: "Saved." });
    expect(ran).toEqual(["part 1"]);
    expect(strict.refusals()).toEqual([]);
    expect(strict.requests[0]!.cut).toBe(true);
    const told = strict.requests[1]!.body.messages.slice(-2);
    expect(told.map((m: any) => [m.role, m.tool_call_id ?? m.tool_calls?.[0]?.id, m.role === "tool" ? m.content : undefined])).toEqual([
      ["assistant", "call_big", undefined],
      ["tool", "call_big", CUT_TOOL_CALL],
    ]);
  });
});
