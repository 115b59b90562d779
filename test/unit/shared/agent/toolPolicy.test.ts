import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { respond } from "../../../../infra/offlineModel/brain.js";
import { runAgentLoop } from "../../../../shared/agent/loop.js";
import type { EventBody } from "../../../../shared/contracts/events.js";
import type { PolicyMode } from "../../../../shared/contracts/policies.js";
import type { ChatModel } from "../../../../shared/llm/types.js";
import { fileText } from "../../../../shared/ports/files.js";
import { builtinTools } from "../../../../shared/tools/builtins.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { defineTool } from "../../../../shared/tools/tool.js";
import { withRun } from "../../../support/memoryRun.js";

/**
 * Tool policies in the agent loop, over in-memory ports, with the offline model in-process (it
 * knows only its messages): a denied call is answered with the policy's reason and the model
 * adapts; log_only lets it run and says what would have happened; @approval asks a person.
 */

const offline: ChatModel = {
  name: "offline",
  async complete(request) {
    const reply = respond({ messages: request.messages as never, tools: request.tools as never });
    return {
      content: reply.content,
      toolCalls: reply.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.stringify(call.arguments) })),
      finishReason: reply.toolCalls.length ? "tool_calls" : "stop",
      usage: { promptTokens: 10, completionTokens: 5 },
    };
  },
};

const paid: string[] = [];
const pay = defineTool({
  name: "pay",
  description: "Pay an amount to someone.",
  access: "write",
  parameters: z.object({ amount: z.number().int(), to: z.string() }),
  async run({ amount, to }) {
    paid.push(`${amount} to ${to}`);
    return `Paid ${amount} to ${to}.`;
  },
});

const SIZE = `@reason("Artifacts may have at most 1,000 characters.")
forbid(principal, action == Action::"write_artifact", resource) when { context.sizes.content > 1000 };`;
const PAYMENTS = `@approval
@reason("Payments over 500 need a person's approval.")
forbid(principal, action == Action::"pay", resource) when { context.arguments.amount > 500 };`;

async function loopWith(cedar: string | undefined, mode: PolicyMode, request: string) {
  const made = await withRun({ status: "running", mode: "react" }, { model: offline });
  if (cedar) await made.fakes.policies.save(made.run.tenantId, "rule", { cedar, mode });
  const outcome = await runAgentLoop(
    { runId: made.runId, ports: made.ports },
    {
      scope: "react",
      role: "react",
      system: () => "You are Stepwise, an AI agent.",
      conversation: [{ role: "user", content: request }],
      tools: new ToolRegistry([...builtinTools, pay]),
      maxRounds: 6,
    },
  );
  await Promise.all([outcome.journal.flush(), outcome.events]);
  const events = made.fakes.events.all(made.runId) as EventBody[];
  const ofType = <T extends EventBody["type"]>(type: T) => events.filter((e): e is Extract<EventBody, { type: T }> => e.type === type);
  return { ...made, outcome, ofType };
}

const bigFile = `use write_artifact {"filename": "notes.md", "content": "${"policy ".repeat(200)}"}`;

describe("tool policies in the agent loop", () => {
  it("enforce: the write over 1,000 characters is denied with the policy's reason; the model sends a smaller file, which is saved", async () => {
    const { ports, runId, outcome, ofType } = await loopWith(SIZE, "enforce", bigFile);
    expect(outcome.kind).toBe("answer");
    const saved = fileText((await ports.files.get(runId, "notes.md"))!);
    expect(saved.length).toBeLessThanOrEqual(1000);
    expect(saved).toMatch(/^policy policy /);
    const results = ofType("tool.result").map((e) => [e.data.ok, e.data.output.split("\n")[0]]);
    expect(results[0]).toEqual([false, "Denied by policy: Artifacts may have at most 1,000 characters."]);
    expect(results[1]?.[0]).toBe(true);
    expect(ofType("guardrail.decided").map((e) => e.data)).toEqual([
      expect.objectContaining({
        kind: "policy",
        stage: "tool_call",
        check: "rule",
        verdict: "deny",
        mode: "enforce",
        reason: "Artifacts may have at most 1,000 characters.",
        tool: "write_artifact",
      }),
    ]);
  });

  it("log_only: the call runs whole, and a guardrail.decided event says it would have been denied", async () => {
    const { ports, runId, ofType } = await loopWith(SIZE, "log_only", bigFile);
    expect(fileText((await ports.files.get(runId, "notes.md"))!).length).toBe(1400);
    expect(ofType("tool.result").map((e) => e.data.ok)).toEqual([true]);
    expect(ofType("guardrail.decided").map((e) => [e.data.verdict, e.data.mode])).toEqual([["deny", "log_only"]]);
  });

  it("without a policy the same file is saved whole and nothing is decided", async () => {
    const { ports, runId, ofType } = await loopWith(undefined, "enforce", bigFile);
    expect(fileText((await ports.files.get(runId, "notes.md"))!).length).toBe(1400);
    expect(ofType("guardrail.decided")).toEqual([]);
  });

  it("@approval over an amount opens a tool approval with the policy's reason; under it the payment runs", async () => {
    paid.length = 0;
    const over = await loopWith(PAYMENTS, "enforce", 'use pay {"amount": 800, "to": "acme"}');
    expect(over.outcome.kind).toBe("interrupted");
    const [opened] = over.ofType("interrupt.opened");
    expect(opened?.data).toMatchObject({ kind: "tool_approval", toolName: "pay", reason: "Payments over 500 need a person's approval." });
    expect(opened?.data.summary.split("\n")[0]).toBe("Payments over 500 need a person's approval.");
    expect(await over.ports.runs.status(over.runId)).toBe("awaiting_input");
    expect(over.ofType("guardrail.decided").map((e) => e.data.verdict)).toEqual(["require_approval"]);
    expect(paid).toEqual([]);

    const under = await loopWith(PAYMENTS, "enforce", 'use pay {"amount": 400, "to": "acme"}');
    expect(under.outcome.kind).toBe("answer");
    expect(paid).toEqual(["400 to acme"]);
  });
});

describe("the tenant's policies, kept per container (TOOL_CATALOG_CACHE_MS)", () => {
  afterEach(() => vi.useRealTimers());

  it("a tenant without policies: its turns read neither policies nor the run after the first; a saved policy holds once the time is up", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const made = await withRun(
      { status: "running", mode: "react" },
      { model: offline, settings: { toolSources: { catalogCacheMs: 5_000 } } },
    );
    const reads = { lists: 0, runs: 0 };
    const store = made.ports.policies;
    const ports = {
      ...made.ports,
      policies: Object.assign(Object.create(store), {
        list: (tenantId: string) => {
          reads.lists++;
          return store.list(tenantId);
        },
      }),
      runs: Object.assign(Object.create(made.ports.runs), {
        get: (runId: string) => {
          reads.runs++;
          return made.ports.runs.get(runId);
        },
      }),
    };
    const turn = async (scope: string) => {
      const seen = made.fakes.events.all(made.runId).length;
      const outcome = await runAgentLoop(
        { runId: made.runId, ports, tenantId: made.run.tenantId, budget: null },
        {
          scope,
          role: "react",
          system: () => "You are Stepwise, an AI agent.",
          conversation: [{ role: "user", content: bigFile }],
          tools: new ToolRegistry([...builtinTools]),
          maxRounds: 6,
        },
      );
      await Promise.all([outcome.journal.flush(), outcome.events]);
      return (made.fakes.events.all(made.runId).slice(seen) as EventBody[]).filter((e) => e.type === "tool.result");
    };
    const before = reads.runs;
    await turn("react");
    await turn("react#2");
    expect({ lists: reads.lists, runs: reads.runs - before }).toEqual({ lists: 1, runs: 0 });

    await made.fakes.policies.save(made.run.tenantId, "rule", { cedar: SIZE, mode: "enforce" });
    vi.setSystemTime(Date.now() + 5_001);
    const results = await turn("react#3");
    expect(reads.lists).toBe(2);
    expect(results.map((e) => (e.type === "tool.result" ? e.data.ok : undefined))).toEqual([false, true]);
  });
});
