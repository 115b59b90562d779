import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type LoopOptions, type RunScope, runAgentLoop } from "../../../../shared/agent/loop.js";
import { StepError } from "../../../../shared/errors.js";
import { JsonContractModel } from "../../../../shared/llm/jsonContractModel.js";
import { OpenAIModel } from "../../../../shared/llm/openaiModel.js";
import { RoleModel } from "../../../../shared/llm/roleModel.js";
import type { RoleSettings } from "../../../../shared/llm/roleSettings.js";
import type { ChatModel } from "../../../../shared/llm/types.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { defineTool } from "../../../../shared/tools/tool.js";
import { withRun } from "../../../support/memoryRun.js";
import { type ScriptedModel, type ScriptedRequest, startScriptedModel } from "../../../support/scriptedModel.js";
import {
  type ProviderLimits,
  REASONING_NOT_PASSED_BACK,
  type StrictProvider,
  startStrictProvider,
} from "../../../support/strictProvider.js";

// DeepSeek V4 thinks by default and refuses a conversation whose assistant tool-call turns come back
// without their `reasoning_content`. The loop runs here through the real `openai` client against the
// strict provider stand-in, which answers as DeepSeek does.

let scripted: ScriptedModel;
let strict: StrictProvider;

/** Two lookups, then the answer; in JSON contract mode the same, written as the contract's JSON. */
function script(request: ScriptedRequest) {
  const results = request.messages.filter(
    (m) => m.role === "tool" || (m.role === "user" && String(m.content).startsWith("Result of")),
  ).length;
  const json = !request.tools?.length;
  if (results >= 2) return json ? { malformed: JSON.stringify({ answer: "Both looked up." }) } : { text: "Both looked up." };
  const key = results === 0 ? "a" : "b";
  return json
    ? { malformed: JSON.stringify({ tool_calls: [{ name: "lookup", arguments: { key } }] }) }
    : { toolCalls: [{ name: "lookup", arguments: { key }, id: `call_${key}` }] };
}

async function start(limits: ProviderLimits = { kind: "deepseek-v4" }) {
  scripted = await startScriptedModel(script);
  strict = await startStrictProvider(scripted.url, limits);
}
beforeEach(() => start());
afterEach(async () => {
  await strict.close();
  await scripted.close();
});

function deepseek(roles?: RoleSettings, model = "deepseek-v4-flash"): ChatModel {
  return new RoleModel(new OpenAIModel({ model, baseURL: strict.url, apiKey: "sk-test", maxRetries: 0 }), { roles });
}

const lookup = (onRun: () => void = () => undefined) =>
  defineTool({
    name: "lookup",
    description: "Looks a key up.",
    access: "read",
    parameters: z.object({ key: z.string() }),
    async run({ key }) {
      onRun();
      return `value of ${key}`;
    },
  });

async function loop(model: ChatModel, options: Partial<LoopOptions> = {}, scope?: (run: RunScope) => void) {
  const { ports, runId } = await withRun({ status: "running" }, { model });
  const run: RunScope = { runId, ports };
  scope?.(run);
  const go = async () => {
    const { journal, events, ...outcome } = await runAgentLoop(run, {
      scope: "react",
      role: "react",
      system: () => "You are Stepwise, an AI agent.",
      conversation: [{ role: "user", content: "Look up a and b." }],
      tools: new ToolRegistry([lookup()]),
      maxRounds: 5,
      ...options,
    });
    await Promise.all([journal.flush(), events]);
    return outcome;
  };
  return { go, run, ports, runId };
}

/** The assistant turns of a request body, with the reasoning each carried. */
const assistantTurns = (body: any) =>
  (body.messages as any[])
    .filter((m) => m.role === "assistant")
    .map((m) => ({ calls: m.tool_calls?.length ?? 0, reasoning: m.reasoning_content }));

describe("reasoning follows DeepSeek V4's rule", () => {
  it("without sending it back, the second call is refused as DeepSeek documents (400), and the run's step fails", async () => {
    const { go } = await loop(deepseek({ default: { reasoningReplay: false } }));
    const error = await go().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepError);
    expect((error as StepError).message).toContain(REASONING_NOT_PASSED_BACK);
    expect(strict.refusals().map((r) => r.status)).toEqual([400]);
  });

  it("each tool-call turn goes back with its own reasoning in the agent's later calls, and the loop answers", async () => {
    const { go } = await loop(deepseek());
    expect(await go()).toMatchObject({ kind: "answer", text: "Both looked up.", rounds: 3 });
    expect(strict.refusals()).toEqual([]);
    const [first, second, third] = strict.requests;
    expect(assistantTurns(first!.body)).toEqual([]);
    expect(assistantTurns(second!.body)).toEqual([{ calls: 1, reasoning: first!.reasoning }]);
    expect(assistantTurns(third!.body)).toEqual([
      { calls: 1, reasoning: first!.reasoning },
      { calls: 1, reasoning: second!.reasoning },
    ]);
    expect(first!.reasoning).not.toEqual(second!.reasoning);
  });

  it("a resumed turn replays its earlier rounds from the journal with their reasoning", async () => {
    let first = true;
    const { go, run } = await loop(deepseek(), {
      // The first round's tool ends the step's time: the loop hands back before its next model call.
      tools: new ToolRegistry([
        lookup(() => {
          if (first) run.deadline = 1;
          first = false;
        }),
      ]),
    });
    expect(await go()).toMatchObject({ kind: "paused", rounds: 1 });
    run.deadline = undefined;
    expect(await go()).toMatchObject({ kind: "answer", text: "Both looked up." });
    expect(strict.refusals()).toEqual([]);
    // The first reply was not asked for again: its reasoning came from the journal.
    expect(strict.requests).toHaveLength(3);
    expect(assistantTurns(strict.requests[1]!.body)).toEqual([{ calls: 1, reasoning: strict.requests[0]!.reasoning }]);
  });

  it("other providers never get reasoning back, also when their model streams it", async () => {
    // DeepSeek's earlier reasoner streams reasoning and refuses it in the input.
    await strict.close();
    strict = await startStrictProvider(scripted.url, { kind: "deepseek-reasoner" });
    const { go } = await loop(deepseek(undefined, "deepseek-reasoner"));
    expect(await go()).toMatchObject({ kind: "answer" });
    for (const request of strict.requests) expect(JSON.stringify(request.body)).not.toContain("reasoning_content");
  });

  it("the provider's own switch is a role setting: thinking disabled, nothing to send back", async () => {
    const { go } = await loop(deepseek({ react: { requestFields: { thinking: { type: "disabled" } }, reasoningReplay: false } }));
    expect(await go()).toMatchObject({ kind: "answer", text: "Both looked up." });
    expect(strict.requests.map((r) => [r.body.thinking, r.reasoning])).toEqual(Array(3).fill([{ type: "disabled" }, undefined]));
  });

  it("JSON contract mode keeps each tool-call turn's reasoning too", async () => {
    const { go } = await loop(new JsonContractModel(deepseek()));
    expect(await go()).toMatchObject({ kind: "answer", text: "Both looked up." });
    const [first, second, third] = strict.requests;
    expect(assistantTurns(second!.body)).toEqual([{ calls: 0, reasoning: first!.reasoning }]);
    expect(assistantTurns(third!.body).map((t) => t.reasoning)).toEqual([first!.reasoning, second!.reasoning]);
  });
});
