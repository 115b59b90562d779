import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { budgetDelivery, EMPTY_ANSWER_CORRECTION, type LoopOptions, runAgentLoop } from "../../../../shared/agent/loop.js";
import type { EventBody } from "../../../../shared/contracts/events.js";
import type { HandlerPorts } from "../../../../shared/handlerPorts.js";
import { JsonContractModel } from "../../../../shared/llm/jsonContractModel.js";
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse } from "../../../../shared/llm/types.js";
import { tokenCounterFor } from "../../../../shared/memory/tokens.js";
import { fileText } from "../../../../shared/ports/files.js";
import type { JournalCommit } from "../../../../shared/ports/journal.js";
import type { Tool } from "../../../../shared/ports/tools.js";
import { defaultSettings, settingsFromEnv } from "../../../../shared/settings.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { MemoryJournal } from "../../../../shared/testing/memoryJournal.js";
import { MemorySpend } from "../../../../shared/testing/memorySpend.js";
import { readArtifact } from "../../../../shared/tools/artifacts.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { defineTool } from "../../../../shared/tools/tool.js";

/**
 * The agent loop with its stores replaced by in-memory fakes (the journal keeps its records in a
 * map that outlives one loop, as DynamoDB would), a scripted model and tools that wait: what the
 * loop sends the model, which tools run when, and what it records.
 */

type Step = { text?: string; calls?: { id: string; name: string; args: unknown }[]; stream?: boolean };
type ModelFn = (request: ChatRequest, index: number) => Step | Promise<Step>;

function harness(
  model: ModelFn,
  budgets: Partial<HandlerPorts["settings"]["budgets"]> = {},
  wrap: (model: ChatModel) => ChatModel = (m) => m,
  /** How the journal's records are written (at once, by default). */
  commit: () => Promise<void> = async () => undefined,
) {
  const requests: { messages: ChatMessage[]; tools?: unknown[] }[] = [];
  const events: EventBody[] = [];
  const usage: Record<string, number>[] = [];
  const files = new MemoryFileStore();
  const journal = new MemoryJournal();
  /** The run record's status, as the loop reads it before each round and before running tools. */
  const state = { status: "running" };
  const chat: ChatModel = {
    name: "gpt-4o-mini",
    async complete(request) {
      requests.push(structuredClone({ messages: request.messages, tools: request.tools }));
      const step = await model(request, requests.length - 1);
      if (step.stream && step.text) request.onText?.(step.text);
      const response: ChatResponse = {
        content: step.text ?? null,
        toolCalls: (step.calls ?? []).map((c) => ({
          id: c.id,
          name: c.name,
          arguments: typeof c.args === "string" ? c.args : JSON.stringify(c.args),
        })),
        finishReason: step.calls?.length ? "tool_calls" : "stop",
        usage: { promptTokens: 10, completionTokens: 5 },
      };
      return response;
    },
  };
  const services = {
    settings: { budgets: { ...defaultSettings("t").budgets, contextTokens: 100_000, toolConcurrency: 2, ...budgets } },
    model: wrap(chat),
    journal: {
      read: (runId: string, scope: string) => journal.read(runId, scope),
      async commit(runId: string, records: JournalCommit) {
        await commit();
        await journal.commit(runId, records);
      },
    },
    runs: {
      get: async (runId: string) => ({ runId, tenantId: "t", status: state.status }),
      status: async () => state.status,
      // What a failed model call cost is added to the run before the error ends the step.
      update: async (_runId: string, _patch: unknown, _onlyIf: unknown, u?: Record<string, number>) => void (u && usage.push(u)),
    },
    events: { append: async (_runId: string, bodies: EventBody[]) => void events.push(...bodies) },
    files,
    interrupts: { get: async () => undefined },
    spend: new MemorySpend(),
  } as unknown as HandlerPorts;

  // As the agents do: write what the loop leaves unwritten, wait for its events, count its usage.
  const run = async (options: Partial<Omit<LoopOptions, "tools">> & { tools: Tool[] }, deadline?: number) => {
    const { usage: spent, journal, events: appended, ...outcome } = await loopOnce(options, deadline);
    await Promise.all([journal.flush(), appended]);
    if (spent.llmCalls) usage.push(spent);
    return outcome;
  };
  const loopOnce = (options: Partial<Omit<LoopOptions, "tools">> & { tools: Tool[] }, deadline?: number) =>
    runAgentLoop(
      { runId: "run_test", ports: services, deadline },
      {
        scope: "task#0#t1",
        role: "executor",
        taskId: "t1",
        system: () => "You are a test agent.",
        conversation: [{ role: "user", content: "Do the task." }],
        maxRounds: 10,
        ...options,
        tools: new ToolRegistry(options.tools),
      },
    );
  return { run, requests, events, usage, files, state };
}

const ofType = <T extends EventBody["type"]>(events: EventBody[], type: T) =>
  events.filter((e): e is Extract<EventBody, { type: T }> => e.type === type);

/** A tool that waits `ms` and tracks how many of its calls run at once. */
function waitingTool() {
  const state = { inFlight: 0, maxInFlight: 0, started: [] as string[], finished: [] as string[] };
  const tool = defineTool({
    name: "wait",
    description: "Waits.",
    access: "read",
    parameters: z.object({ label: z.string(), ms: z.number() }),
    async run({ label, ms }) {
      state.inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      state.started.push(label);
      await delay(ms);
      state.finished.push(label);
      state.inFlight--;
      return `${label} done`;
    },
  });
  return { tool, state };
}

const WAITS = [
  // A outlasts B, C and D run one after another by a wide margin, also on a loaded machine.
  { id: "c1", label: "A", ms: 600 },
  { id: "c2", label: "B", ms: 10 },
  { id: "c3", label: "C", ms: 60 },
  { id: "c4", label: "D", ms: 5 },
];
const waitCalls = () => WAITS.map((w) => ({ id: w.id, name: "wait", args: { label: w.label, ms: w.ms } }));
const callsThenAnswer: ModelFn = (request) => (request.messages.at(-1)!.role === "tool" ? { text: "All done." } : { calls: waitCalls() });

/** A write tool that counts how often it ran. */
function countingTool() {
  const counter = { runs: 0 };
  const tool = defineTool({
    name: "count",
    description: "Counts.",
    access: "write",
    parameters: z.object({}),
    run: async () => `run ${++counter.runs}`,
  });
  return { tool, counter };
}

describe("agent loop: parallel tool calls", () => {
  it("runs one response's calls at most toolConcurrency at once, and feeds the results back in call order", async () => {
    const { tool, state } = waitingTool();
    const h = harness(callsThenAnswer);
    const outcome = await h.run({ tools: [tool], toolConcurrency: 2 });

    expect(outcome).toEqual({ kind: "answer", text: "All done.", rounds: 2 });
    expect(state.maxInFlight).toBe(2);
    expect(state.finished[0]).toBe("B"); // they finished out of order …
    expect(state.finished.at(-1)).toBe("A");
    const tail = h.requests[1]!.messages.slice(-4); // … and come back in call order
    expect(tail.map((m) => [m.role, (m as { tool_call_id?: string }).tool_call_id, m.content])).toEqual(
      WAITS.map((w) => ["tool", w.id, `${w.label} done`]),
    );
    // Each result is shown as its call ends: B, then C and D, which ran one after another, then A.
    expect(ofType(h.events, "tool.result").map((e) => e.data.callId)).toEqual(["c2", "c3", "c4", "c1"]);
    expect(ofType(h.events, "tool.called").map((e) => e.data)).toEqual(
      WAITS.map((w) => ({
        agent: "executor",
        taskId: "t1",
        callId: w.id,
        tool: "wait",
        arguments: { label: w.label, ms: w.ms },
        persona: "Wait specialist",
      })),
    );
    expect(h.usage[0]).toMatchObject({ llmCalls: 2, toolCalls: 4, promptTokens: 20, completionTokens: 10 });
  });

  it("shows a fast call's result before a slow call of the same round ends; the journal and the model keep the calls' order", async () => {
    const h = harness((request) =>
      request.messages.at(-1)!.role === "tool"
        ? { text: "Both done." }
        : {
            calls: [
              { id: "slow", name: "slow", args: {} },
              { id: "fast", name: "fast", args: {} },
            ],
          },
    );
    const seen = { fastResultBeforeSlowEnded: false };
    const slow = defineTool({
      name: "slow",
      description: "Ends once the fast call's result is shown, or after ten seconds.",
      access: "read",
      parameters: z.object({}),
      async run() {
        for (let waited = 0; waited < 10_000; waited += 10) {
          if (ofType(h.events, "tool.result").some((e) => e.data.callId === "fast")) {
            seen.fastResultBeforeSlowEnded = true;
            break;
          }
          await delay(10);
        }
        return "slow done";
      },
    });
    const fast = defineTool({
      name: "fast",
      description: "Ends at once.",
      access: "read",
      parameters: z.object({}),
      run: async () => "fast done",
    });
    expect(await h.run({ tools: [slow, fast], toolConcurrency: 2 })).toMatchObject({ kind: "answer", text: "Both done." });
    expect(seen.fastResultBeforeSlowEnded).toBe(true);
    expect(ofType(h.events, "tool.result").map((e) => e.data.callId)).toEqual(["fast", "slow"]);
    // The next model call reads the results in the calls' order.
    expect(h.requests[1]!.messages.slice(-2).map((m) => [(m as { tool_call_id?: string }).tool_call_id, m.content])).toEqual([
      ["slow", "slow done"],
      ["fast", "fast done"],
    ]);
  });

  it("counts a tool's own model calls (a report written live) in the run's usage", async () => {
    const writer = defineTool({
      name: "write",
      description: "Writes with the model.",
      access: "write",
      parameters: z.object({}),
      async run(_args, context) {
        const reply = await context.model!.complete({ role: "executor", messages: [{ role: "user", content: "Write it." }] });
        return reply.content ?? "";
      },
    });
    const h = harness((request) =>
      request.messages.at(-1)!.content === "Write it."
        ? { text: "The report." }
        : request.messages.at(-1)!.role === "tool"
          ? { text: "Written." }
          : { calls: [{ id: "w1", name: "write", args: {} }] },
    );
    expect(await h.run({ tools: [writer] })).toMatchObject({ kind: "answer", text: "Written." });
    expect(h.requests).toHaveLength(3);
    expect(h.usage.at(-1)).toMatchObject({ llmCalls: 3, toolCalls: 1, promptTokens: 30, completionTokens: 15 });
  });

  it("takes the limit from TOOL_CONCURRENCY when the agent gives none (default 2)", async () => {
    expect(settingsFromEnv({ TABLE_NAME: "t" }).budgets.toolConcurrency).toBe(2);
    const { tool, state } = waitingTool();
    await harness(callsThenAnswer, { toolConcurrency: 3 }).run({ tools: [tool] });
    expect(state.maxInFlight).toBe(3);
  });
});

describe("agent loop: long tool output", () => {
  const OUTPUT = Array.from({ length: 400 }, (_, i) => `row ${i}: ${"v".repeat(60)}`).join("\n");
  const big = defineTool({ name: "big", description: "Big output.", access: "read", parameters: z.object({}), run: async () => OUTPUT });

  it("cuts it for the model, with a pointer to the artifact that keeps it whole", async () => {
    expect(OUTPUT.length).toBeGreaterThan(20_000);
    const h = harness((request) =>
      request.messages.at(-1)!.role === "tool" ? { text: "Seen." } : { calls: [{ id: "call/1:x", name: "big", args: {} }] },
    );
    await h.run({ tools: [big] });

    // Named by scope, round and call: call ids are only unique within one agent's conversation.
    const name = "tool-output-task_0_t1-0-call_1_x.txt";
    expect(fileText((await h.files.get("run_test", name))!)).toBe(OUTPUT);
    const shown = h.requests[1]!.messages.at(-1)!;
    expect(shown.role).toBe("tool");
    const content = shown.content as string;
    expect(content.length).toBeLessThanOrEqual(10_000);
    expect(OUTPUT.startsWith(content.slice(0, content.indexOf("\n[Output truncated")))).toBe(true);
    expect(content).toContain(`"${name}"`);
    expect(content).toContain(`of ${OUTPUT.length} characters`);
    const [event] = ofType(h.events, "tool.result");
    expect(event!.data.output.length).toBeLessThanOrEqual(2_000);
  });

  it("a cut output can be read to its end: read_artifact from the offset each reply names, never cut again", async () => {
    const next = (text: string) => /"offset": (\d+)\}/.exec(text)?.[1];
    const h = harness((request) => {
      const last = request.messages.at(-1)!;
      if (last.role !== "tool") return { calls: [{ id: "c0", name: "big", args: {} }] };
      const offset = next(last.content as string);
      const name = /"filename": "([^"]+)"/.exec(last.content as string)?.[1];
      return offset
        ? { calls: [{ id: `c${offset}`, name: "read_artifact", args: { filename: name, offset: Number(offset) } }] }
        : { text: "Read it all." };
    });
    const outcome = await h.run({ tools: [big, readArtifact], maxRounds: 20 });
    expect(outcome).toMatchObject({ kind: "answer", text: "Read it all." });
    // What the model was shown, stitched together: the head, then each read, is the whole output.
    const shown = h.requests
      .slice(1)
      .map((r) => (r.messages.at(-1)!.content as string).replace(/\n\[(Output truncated|characters \d+–\d+ of)[^\]]*\]$/, ""));
    expect(shown.join("")).toBe(OUTPUT);
    expect(h.requests.length).toBeGreaterThan(4);
    for (const r of h.requests.slice(2)) expect(String(r.messages.at(-1)!.content)).not.toContain("[Output truncated");
  });
});

describe("agent loop: prompts", () => {
  const LONG = "https://files.example.com/exports/2024/12/customers-full-export.csv?signature=0123456789abcdef";
  const echo = defineTool({
    name: "echo",
    description: "Echo.",
    access: "read",
    parameters: z.object({ url: z.string() }),
    run: async ({ url }) => `fetched ${url}`,
  });

  it("shows the model placeholders for long URLs and gives tools the real URL back", async () => {
    const h = harness((request) =>
      request.messages.at(-1)!.role === "tool" ? { text: "ok" } : { calls: [{ id: "c1", name: "echo", args: { url: "[url:1]" } }] },
    );
    await h.run({ tools: [echo], conversation: [{ role: "user", content: `Fetch ${LONG} please` }] });
    expect(h.requests[0]!.messages[1]).toEqual({ role: "user", content: "Fetch [url:1] please" });
    expect(ofType(h.events, "tool.called")[0]!.data.arguments).toEqual({ url: LONG });
    expect(ofType(h.events, "tool.result")[0]!.data.output).toBe(`fetched ${LONG}`);
    expect(h.requests[1]!.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "c1", content: "fetched [url:1]" });
    expect(JSON.stringify(h.requests)).not.toContain(LONG);
  });

  it("restores placeholders in what a person reads: the answer, its deltas (a placeholder split across them too) and thoughts", async () => {
    const h = harness((request) => {
      // The placeholder arrives cut in three pieces, as tokens do.
      for (const piece of ["The data is at [u", "rl:", "1] now."]) request.onText?.(piece);
      return { text: "The data is at [url:1] now." };
    });
    const outcome = await h.run({ tools: [], conversation: [{ role: "user", content: `Where is ${LONG}?` }] });
    expect(h.requests[0]!.messages[1]).toEqual({ role: "user", content: "Where is [url:1]?" });
    expect(outcome).toMatchObject({ kind: "answer", text: `The data is at ${LONG} now.` });
    const deltas = ofType(h.events, "agent.delta").map((e) => e.data.text);
    expect(deltas.join("")).toBe(`The data is at ${LONG} now.`);
    expect(deltas.join("")).not.toContain("[u");

    const unstreamed = harness(() => ({ text: "See [url:1]." }));
    const answered = await unstreamed.run({ tools: [], conversation: [{ role: "user", content: `Where is ${LONG}?` }] });
    expect(answered).toMatchObject({ text: `See ${LONG}.` });
    expect(ofType(unstreamed.events, "agent.thought")[0]!.data.text).toBe(`See ${LONG}.`);
  });

  it("builds the system prompt afresh for every model call", async () => {
    let built = 0;
    const { tool } = waitingTool();
    const h = harness((request) =>
      request.messages.at(-1)!.role === "tool" ? { text: "ok" } : { calls: [{ id: "c1", name: "wait", args: { label: "A", ms: 1 } }] },
    );
    await h.run({ tools: [tool], system: () => `System prompt #${++built}` });
    expect(h.requests.map((r) => r.messages[0])).toEqual([
      { role: "system", content: "System prompt #1" },
      { role: "system", content: "System prompt #2" },
    ]);
  });

  it("fits the history to CONTEXT_BUDGET_TOKENS, keeping the current request", async () => {
    const history: ChatMessage[] = [
      { role: "user", content: `Earlier: ${"blah ".repeat(300)}` },
      { role: "assistant", content: "Earlier answer." },
    ];
    const h = harness(() => ({ text: "ok" }), { contextTokens: 100 });
    await h.run({ tools: [], conversation: [...history, { role: "user", content: "Now this." }] });
    expect(h.requests[0]!.messages).toEqual([
      { role: "system", content: "You are a test agent." },
      { role: "user", content: "Now this." },
    ]);
    const roomy = harness(() => ({ text: "ok" }));
    await roomy.run({ tools: [], conversation: [...history, { role: "user", content: "Now this." }] });
    expect(roomy.requests[0]!.messages).toHaveLength(4);
  });

  it("coalesces streamed text into agent.delta events of the agent", async () => {
    const h = harness((request) => {
      for (const piece of ["Hel", "lo ", "wor", "ld"]) request.onText?.(piece);
      return { text: "Hello world" };
    });
    await h.run({ tools: [] });
    const deltas = ofType(h.events, "agent.delta");
    expect(deltas.map((e) => e.data.text).join("")).toBe("Hello world");
    expect(deltas.length).toBeLessThan(4);
    expect(deltas[0]!.data).toMatchObject({ agent: "executor", taskId: "t1" });
  });
});

describe("agent loop: a catalogue over the tool cap", () => {
  /** 140 tools of one source, the last one the one the task needs. */
  const catalogue = Array.from({ length: 140 }, (_, i) =>
    defineTool({
      name: `bulk__tool_${i + 1}`,
      description: i === 139 ? "Converts a temperature from Celsius to Fahrenheit." : `Returns the ${i + 1}th number of a series.`,
      access: "read",
      parameters: z.object({}).passthrough(),
      run: async () => `result of tool ${i + 1}`,
    }),
  ).map((tool) => Object.assign(tool, { source: "bulk" }));
  const builtin = defineTool({ name: "calc", description: "Computes.", access: "read", parameters: z.object({}), run: async () => "1" });
  const offered = (request: { tools?: unknown[] }) => (request.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);

  it("offers no more tools than the cap; find_tools loads the one it finds for the following rounds, also on a retried step", async () => {
    let failOnce = true;
    const h = harness((request, i) => {
      if (i === 0) return { calls: [{ id: "s1", name: "find_tools", args: { query: "celsius to fahrenheit" } }] };
      if (i === 1) return { calls: [{ id: "c1", name: "bulk__tool_140", args: {} }] };
      if (failOnce) {
        failOnce = false;
        throw new Error("the step's Lambda died");
      }
      return { text: `done with ${request.tools?.length} tools` };
    });
    await expect(h.run({ tools: [builtin, ...catalogue], maxTools: 20 })).rejects.toThrow("died");
    expect(h.requests.map((r) => r.tools?.length)).toEqual([2, 3, 3]);
    expect(offered(h.requests[0]!)).toEqual(["calc", "find_tools"]);
    expect(offered(h.requests[1]!)).toEqual(["calc", "bulk__tool_140", "find_tools"]);
    const found = h.requests[1]!.messages.find((m) => m.role === "tool")!.content as string;
    expect(found).toMatch(/^Loaded 1 tools for "celsius to fahrenheit"/);
    expect(ofType(h.events, "tool.result").map((e) => e.data.output)).toContain("result of tool 140");

    // The retried step replays the search from the journal and offers the found tool again.
    const outcome = await h.run({ tools: [builtin, ...catalogue], maxTools: 20 });
    expect(outcome).toMatchObject({ kind: "answer", text: "done with 3 tools" });
    expect(h.requests).toHaveLength(4);
    expect(offered(h.requests[3]!)).toEqual(["calc", "bulk__tool_140", "find_tools"]);
  });

  it("drops the oldest loaded tools first when the found ones would pass the cap", async () => {
    const queries = ["11th 12th 13th", "21th 22th 23th", "31th 32th 33th"];
    const h = harness((_request, i) =>
      i < 3 ? { calls: [{ id: `s${i}`, name: "find_tools", args: { query: queries[i], limit: 3 } }] } : { text: "ok" },
    );
    await h.run({ tools: [builtin, ...catalogue], maxTools: 6 });
    expect(h.requests.map((r) => r.tools?.length)).toEqual([2, 5, 6, 6]);
    const tools = (n: number[]) => n.map((i) => `bulk__tool_${i}`);
    expect(offered(h.requests[1]!)).toEqual(["calc", ...tools([11, 12, 13]), "find_tools"]);
    expect(offered(h.requests[2]!)).toEqual(["calc", ...tools([13, 21, 22, 23]), "find_tools"]);
    expect(offered(h.requests[3]!)).toEqual(["calc", ...tools([23, 31, 32, 33]), "find_tools"]);
  });

  it("a catalogue under the cap is offered whole, without find_tools", async () => {
    const h = harness(() => ({ text: "ok" }));
    await h.run({ tools: [builtin, ...catalogue.slice(0, 10)], maxTools: 20 });
    expect(h.requests[0]!.tools).toHaveLength(11);
    expect(offered(h.requests[0]!)).not.toContain("find_tools");
  });
});

describe("agent loop: budget, deadline and replay", () => {
  it("after maxRounds, one last call without tools delivers what was done and what was not", async () => {
    const { tool } = waitingTool();
    const h = harness((request, i) =>
      request.tools?.length
        ? { text: `step ${i + 1}`, calls: [{ id: `c${i}`, name: "wait", args: { label: `L${i}`, ms: 1 } }] }
        : // A model that calls a tool anyway: the call is not run, its text is the delivery.
          { text: "Waited three times; not done: the fourth wait.", calls: [{ id: "late", name: "wait", args: { label: "x", ms: 1 } }] },
    );
    const outcome = await h.run({ tools: [tool], maxRounds: 3 });
    expect(outcome).toEqual({ kind: "budget", rounds: 3, text: "Waited three times; not done: the fourth wait." });
    expect(h.requests).toHaveLength(4);
    expect(h.requests.map((r) => r.tools?.length ?? 0)).toEqual([1, 1, 1, 0]);
    expect(h.requests[3]!.messages.at(-1)).toEqual({ role: "user", content: budgetDelivery(3) });
    expect(ofType(h.events, "tool.called").map((e) => e.data.callId)).toEqual(["c0", "c1", "c2"]);
  });

  it("a delivery with no text still ends the turn, saying it stopped at the budget", async () => {
    const h = harness((request, i) =>
      request.tools?.length ? { calls: [{ id: `c${i}`, name: "wait", args: { label: "L", ms: 1 } }] } : {},
    );
    const outcome = await h.run({ tools: [waitingTool().tool], maxRounds: 1 });
    expect(outcome).toMatchObject({
      kind: "budget",
      rounds: 1,
      text: "Stopped at the round budget (1 rounds). The model gave no summary.",
    });
  });

  it("hands back (paused) instead of starting a round after the deadline", async () => {
    const h = harness(() => ({ text: "never" }));
    const outcome = await h.run({ tools: [] }, Date.now() - 1);
    expect(outcome).toEqual({ kind: "paused", rounds: 0 });
    expect(h.requests).toHaveLength(0);
  });

  it("stops without running the tools when the run ends (a cancel) while the model is thinking", async () => {
    const { tool: counted, counter } = countingTool();
    const h = harness(() => {
      h.state.status = "cancelled";
      return { calls: [{ id: "c1", name: "count", args: {} }] };
    });
    const outcome = await h.run({ tools: [counted] });
    expect(outcome).toEqual({ kind: "ended", rounds: 0 });
    expect(counter.runs).toBe(0);
    expect(ofType(h.events, "tool.result")).toHaveLength(0);
  });

  it("a cancel during a tool round aborts the next model call: the loop ends without its answer", async () => {
    const cancelling = defineTool({
      name: "look",
      description: "Looks.",
      access: "read",
      parameters: z.object({}),
      run: async () => {
        h.state.status = "cancelled";
        return "seen";
      },
    });
    let aborted = false;
    const h = harness((request, i) => {
      if (i === 0) return { calls: [{ id: "c1", name: "look", args: {} }] };
      // The second call thinks until it is aborted.
      return new Promise((_resolve, reject) =>
        request.signal!.addEventListener("abort", () => {
          aborted = true;
          reject(request.signal!.reason);
        }),
      );
    });
    expect(await h.run({ tools: [cancelling] })).toEqual({ kind: "ended", rounds: 1 });
    expect(aborted).toBe(true);
    expect(ofType(h.events, "agent.thought")).toHaveLength(0);
    expect(h.usage).toEqual([{ llmCalls: 1, promptTokens: 10, completionTokens: 5, toolCalls: 1 }]); // the aborted call is no failure to charge
  });

  it("the next model call does not wait for the last round's records to be written; the loop ends only once they are", async () => {
    const { tool } = waitingTool();
    let written = 0;
    let release!: () => void;
    const slowWrite = new Promise<void>((resolve) => (release = resolve));
    const h = harness(
      (_request, i) => (i === 0 ? { calls: [{ id: "c1", name: "wait", args: { label: "A", ms: 1 } }] } : { text: "Done." }),
      {},
      undefined,
      async () => {
        await slowWrite;
        written++;
      },
    );
    const outcome = h.run({ tools: [tool] });
    await vi.waitFor(() => expect(h.requests).toHaveLength(2));
    expect(written).toBe(0);
    release();
    expect(await outcome).toEqual({ kind: "answer", text: "Done.", rounds: 2 });
    expect(written).toBeGreaterThan(0);
  });

  it("a failed write of the last round's records fails the loop with that error, and aborts the call in flight", async () => {
    const { tool } = waitingTool();
    let aborted = false;
    const h = harness(
      (request, i) => {
        if (i === 0) return { calls: [{ id: "c1", name: "wait", args: { label: "A", ms: 1 } }] };
        return new Promise((_resolve, reject) =>
          request.signal!.addEventListener("abort", () => {
            aborted = true;
            reject(new Error("aborted"));
          }),
        );
      },
      {},
      undefined,
      async () => {
        throw new Error("ProvisionedThroughputExceededException");
      },
    );
    await expect(h.run({ tools: [tool] })).rejects.toThrow("ProvisionedThroughputExceededException");
    expect(aborted).toBe(true);
  });

  it("does not call the model for a run that has already ended", async () => {
    const h = harness(() => ({ text: "never" }));
    h.state.status = "timed_out";
    expect(await h.run({ tools: [] })).toEqual({ kind: "ended", rounds: 0 });
    expect(h.requests).toHaveLength(0);
  });

  it("replays a finished loop from its journal: no model call, no tool run, no new events", async () => {
    const { tool: counted, counter } = countingTool();
    const h = harness((request) =>
      request.messages.at(-1)!.role === "tool" ? { text: "Counted." } : { calls: [{ id: "c1", name: "count", args: {} }] },
    );
    const first = await h.run({ tools: [counted] });
    const recorded = { requests: h.requests.length, events: h.events.length, usage: h.usage.length };
    const again = await h.run({ tools: [counted] });
    expect(again).toEqual(first);
    expect(counter.runs).toBe(1);
    expect({ requests: h.requests.length, events: h.events.length, usage: h.usage.length }).toEqual(recorded);
  });
});

describe("agent loop: what the model says and what it costs", () => {
  it("an empty answer is sent back once with a correction; a real answer then ends the loop", async () => {
    const h = harness((_request, i) => (i === 0 ? { text: "" } : { text: "Here it is." }));
    expect(await h.run({ tools: [] })).toEqual({ kind: "answer", text: "Here it is.", rounds: 2 });
    expect(h.requests[1]!.messages.at(-1)).toEqual({ role: "user", content: EMPTY_ANSWER_CORRECTION });
    expect(h.usage[0]).toMatchObject({ llmCalls: 2 }); // the empty answer was paid for too
  });

  it("a second empty answer ends the loop as empty (the agent fails with a clear error), after exactly one correction", async () => {
    const h = harness(() => ({ text: "  " }));
    expect(await h.run({ tools: [] })).toEqual({ kind: "empty", rounds: 2 });
    expect(h.requests).toHaveLength(2);
    expect(h.requests[1]!.messages.filter((m) => m.content === EMPTY_ANSWER_CORRECTION)).toHaveLength(1);
  });

  it("streamed text is one fact: agent.delta only, no agent.thought repeating it; unstreamed text is one agent.thought", async () => {
    const streamed = harness(() => ({ text: "Streamed answer.", stream: true }));
    await streamed.run({ tools: [] });
    expect(
      ofType(streamed.events, "agent.delta")
        .map((e) => e.data.text)
        .join(""),
    ).toBe("Streamed answer.");
    expect(ofType(streamed.events, "agent.thought")).toEqual([]);

    const whole = harness(() => ({ text: "Whole answer." }));
    await whole.run({ tools: [] });
    expect(ofType(whole.events, "agent.delta")).toEqual([]);
    expect(ofType(whole.events, "agent.thought").map((e) => e.data.text)).toEqual(["Whole answer."]);
  });

  it("a model call that fails is counted in usage (with what it reported it cost), and the error still ends the step", async () => {
    const h = harness(() => {
      throw Object.assign(new Error("the model broke its contract 3 times"), {
        paidCalls: 3,
        usage: { promptTokens: 30, completionTokens: 9 },
      });
    });
    await expect(h.run({ tools: [] })).rejects.toThrow("3 times");
    expect(h.usage).toEqual([{ llmCalls: 3, promptTokens: 30, completionTokens: 9, toolCalls: 0 }]);
  });

  it("JSON contract mode: a response after corrections counts every paid request, and so does a failure after three", async () => {
    const h = harness(
      (_request, i) => ({ text: i === 0 ? "not json" : JSON.stringify({ answer: "Fine." }) }),
      {},
      (model) => new JsonContractModel(model),
    );
    const pad = defineTool({ name: "pad", description: "Pads.", access: "read", parameters: z.object({}), run: async () => "x" });
    expect(await h.run({ tools: [pad] })).toMatchObject({ kind: "answer", text: "Fine." });
    expect(h.usage[0]).toMatchObject({ llmCalls: 2, promptTokens: 20, completionTokens: 10 });

    const failing = harness(
      () => ({ text: "never json" }),
      {},
      (model) => new JsonContractModel(model),
    );
    await expect(failing.run({ tools: [pad] })).rejects.toThrow(/JSON contract 3 times/);
    expect(failing.usage).toEqual([{ llmCalls: 3, promptTokens: 30, completionTokens: 15, toolCalls: 0 }]);
  });
});

describe("agent loop in JSON contract mode", () => {
  it("gives every tool call of a run its own id, even when the history is cut between rounds", async () => {
    // Earlier session turns that fit in round 1, and are dropped once this run's tool results grow.
    const pad = defineTool({
      name: "pad",
      description: "Pads.",
      access: "read",
      parameters: z.object({}),
      run: async () => "word ".repeat(400),
    });
    const history: ChatMessage[] = [
      { role: "user", content: "old ".repeat(300) },
      { role: "assistant", content: "Answer one." },
      { role: "user", content: "older ".repeat(300) },
      { role: "assistant", content: "Answer two." },
    ];
    const conversation: ChatMessage[] = [...history, { role: "user", content: "Now pad three times." }];
    const counter = tokenCounterFor("gpt-4o-mini");
    const budget =
      counter.countMessages([{ role: "system", content: "You are a test agent." }, ...conversation]) +
      counter.count(JSON.stringify(new ToolRegistry([pad]).specs())) +
      5;
    const h = harness(
      (_request, i) => ({
        text: i < 3 ? JSON.stringify({ tool_calls: [{ name: "pad", arguments: {} }] }) : JSON.stringify({ answer: "Padded." }),
      }),
      { contextTokens: budget },
      (model) => new JsonContractModel(model),
    );
    expect(await h.run({ tools: [pad], conversation })).toMatchObject({ kind: "answer", text: "Padded." });
    expect(JSON.stringify(h.requests[0]!.messages)).toContain("Answer one."); // the history was there at first
    const ids = ofType(h.events, "tool.called").map((e) => e.data.callId);
    expect(ids).toHaveLength(3);
    // Known bug: JsonContractModel numbers calls by the assistant messages in the (cut) prompt.
    expect(new Set(ids).size, `call ids ${ids.join(", ")}`).toBe(3);
  });
});

describe("agent loop: images a tool returns", () => {
  /** A 1×1 PNG. */
  const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
  const LIMITS = { imageMaxBytes: 1_000, imageRequestMaxBytes: 2_000 };
  /** An MCP-like tool that saves the screenshots it returns as run files and names them, after `ms`. */
  const screenshots = (names: string[], ms = 0): Tool => ({
    name: "screenshot",
    description: "Takes screenshots.",
    access: "read",
    parameters: z.object({}),
    async run(_args, context) {
      await delay(ms);
      for (const name of names)
        await context.files.put(context.runId, name, name.startsWith("big") ? Buffer.alloc(1_500) : PNG, { contentType: "image/png" });
      return { output: `Took ${names.length} screenshot(s).`, images: names };
    },
  });
  const callThenAnswer: ModelFn = (request) =>
    request.messages.some((m) => m.role === "tool") ? { text: "Seen." } : { calls: [{ id: "c1", name: "screenshot", args: {} }] };
  const dataUrl = `data:image/png;base64,${PNG.toString("base64")}`;

  it("shows a model that sees images the images after the round's tool results, as a user message with image_url parts", async () => {
    const h = harness(callThenAnswer);
    await h.run({ tools: [screenshots(["a.png", "big.png"])], toolImages: LIMITS });
    expect(h.requests[1]!.messages.slice(-2)).toEqual([
      { role: "tool", tool_call_id: "c1", content: "Took 2 screenshot(s)." },
      {
        role: "user",
        content: [
          {
            type: "text",
            text: "Images the tool calls above returned, shown to you: a.png.\nNot shown: big.png has 1500 bytes; a model sees images of at most 1000 bytes.",
          },
          { type: "image_url", image_url: { url: dataUrl } },
        ],
      },
    ]);
  });

  it("a model that does not see images gets the tool's text only; the images stay run files", async () => {
    const h = harness(callThenAnswer);
    await h.run({ tools: [screenshots(["a.png"])] });
    expect(JSON.stringify(h.requests[1]!.messages)).not.toContain("image_url");
    expect(h.requests[1]!.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "c1", content: "Took 1 screenshot(s)." });
    expect((await h.files.list("run_test")).map((f) => f.name)).toEqual(["a.png"]);
  });

  it("is rebuilt the same way when a turn resumes from its journal, the tool not run again", async () => {
    const h = harness(callThenAnswer);
    let runs = 0;
    const tool = screenshots(["a.png"], 1_500);
    const counted: Tool = {
      ...tool,
      run: (args, context) => {
        runs++;
        return tool.run(args, context);
      },
    };
    // The deadline passes while the tool runs: the turn hands back after its first round.
    expect(await h.run({ tools: [counted], toolImages: LIMITS }, Date.now() + 1_000)).toMatchObject({ kind: "paused" });
    expect(h.requests).toHaveLength(1);
    expect(await h.run({ tools: [counted], toolImages: LIMITS })).toMatchObject({ kind: "answer", text: "Seen." });
    expect(runs).toBe(1);
    expect(h.requests[1]!.messages.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "text", text: "Images the tool calls above returned, shown to you: a.png." },
        { type: "image_url", image_url: { url: dataUrl } },
      ],
    });
  });

  it("counts the images the conversation shows already against the per-request limit", async () => {
    const h = harness((request) =>
      request.messages.filter((m) => m.role === "tool").length >= 2
        ? { text: "Seen." }
        : { calls: [{ id: `c${request.messages.length}`, name: "screenshot", args: {} }] },
    );
    const tight = { imageMaxBytes: 1_000, imageRequestMaxBytes: PNG.length + 10 };
    await h.run({ tools: [screenshots(["a.png"])], toolImages: tight });
    const shown = h.requests[2]!.messages.filter((m) => m.role === "user" && Array.isArray(m.content));
    expect(shown.map((m) => (m.content as { type: string; text?: string }[])[0]!.text)).toEqual([
      "Images the tool calls above returned, shown to you: a.png.",
      `Images the tool calls above returned, shown to you: none.\nNot shown: a.png (${PNG.length} bytes) would pass the ${PNG.length + 10} bytes of images one request may carry.`,
    ]);
  });
});
