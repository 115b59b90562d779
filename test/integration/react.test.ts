import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/contracts/events.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/** ReAct runs, and how `auto` chooses between ReAct and Plan-and-Solve. */
let stack: RunningStack;
let client: Client;

beforeAll(async () => {
  stack = await startStack();
  client = new Client(stack.url, stack.apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

async function runToEnd(body: Record<string, unknown>) {
  const { runId } = await client.submit(body);
  return client.waitForEnd(runId);
}

describe("react run", () => {
  let run: any;
  let events: RunEvent[];
  beforeAll(async () => {
    ({ run, events } = await runToEnd({ input: "What is 12*(3+4)? Also tell me about this sentence", mode: "react" }));
  });

  it("succeeds with the computed answer", () => {
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.mode).toBe("react");
    expect(run.result).toContain("84");
    expect(run.plan).toBeNull(); // no planner in a ReAct run
    expect(run.tasks).toEqual([]);
    expect(run.usage.llmCalls).toBeGreaterThan(0);
    expect(run.usage.toolCalls).toBeGreaterThan(0);
  });

  it("records its calculator call and result as the react agent's", () => {
    const called = events.filter(
      (e): e is Extract<RunEvent, { type: "tool.called" }> => e.type === "tool.called" && e.data.tool === "calculator",
    );
    const results = events.filter(
      (e): e is Extract<RunEvent, { type: "tool.result" }> => e.type === "tool.result" && e.data.tool === "calculator",
    );
    expect(called).toHaveLength(1);
    expect(called[0]!.data).toMatchObject({ agent: "react", arguments: { expression: "12*(3+4)" } });
    expect(called[0]!.data.taskId).toBeUndefined();
    expect(results).toHaveLength(1);
    expect(results[0]!.data).toMatchObject({ agent: "react", callId: called[0]!.data.callId, ok: true, output: "12*(3+4) = 84" });
    expect(results[0]!.seq).toBeGreaterThan(called[0]!.seq);
  });

  it("has a well-formed event log: run.started first, run.succeeded last, no plan or tasks", () => {
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({ type: "run.started", data: { mode: "react" } });
    expect(events.at(-1)).toMatchObject({ type: "run.succeeded", data: { result: run.result } });
    expect(events.some((e) => e.type === "plan.updated" || e.type === "task.started")).toBe(false);
    // every tool event comes from the react agent
    expect(events.filter((e) => e.type === "tool.called" || e.type === "tool.result").every((e) => (e.data as any).agent === "react")).toBe(
      true,
    );
  });
});

describe("mode auto", () => {
  const MULTI = "Compute 17*23 and (120/8)+2^5, then write a short report";
  const SINGLE = "What is 6*7?";
  let runs: Record<string, { run: any; events: RunEvent[] }>;

  beforeAll(async () => {
    const entries = await Promise.all(
      Object.entries({
        deepTrue: { input: SINGLE, mode: "auto", deepThink: true },
        deepFalse: { input: MULTI, mode: "auto", deepThink: false },
        routedMulti: { input: MULTI, mode: "auto" },
        routedSingle: { input: SINGLE }, // auto is the default
      }).map(async ([name, body]) => [name, await runToEnd(body)] as const),
    );
    runs = Object.fromEntries(entries);
  });

  it("deepThink: true means plan_solve, whatever the request", () => {
    const { run, events } = runs.deepTrue!;
    expect(run.status).toBe("succeeded");
    expect(run.requestedMode).toBe("auto");
    expect(run.mode).toBe("plan_solve");
    expect(events.some((e) => e.type === "plan.updated")).toBe(true);
    // no router call: the flag decided
    expect(events.some((e) => e.type === "agent.thought" && e.data.agent === "router")).toBe(false);
  });

  it("deepThink: false means react, whatever the request", () => {
    const { run, events } = runs.deepFalse!;
    expect(run.status).toBe("succeeded");
    expect(run.requestedMode).toBe("auto");
    expect(run.mode).toBe("react");
    expect(events.some((e) => e.type === "plan.updated")).toBe(false);
    expect(events.some((e) => e.type === "agent.thought" && e.data.agent === "router")).toBe(false);
  });

  it("without deepThink, the router picks plan_solve for a multi-part request and says why", () => {
    const { run, events } = runs.routedMulti!;
    expect(run.status).toBe("succeeded");
    expect(run.requestedMode).toBe("auto");
    expect(run.mode).toBe("plan_solve");
    const thought = events.find((e) => e.type === "agent.thought" && e.data.agent === "router");
    expect(thought).toBeDefined();
    expect((thought!.data as { text: string }).text).toMatch(/plan_solve/);
    expect(events.some((e) => e.type === "plan.updated")).toBe(true);
    expect(run.result).toContain("391");
    expect(run.result).toContain("47");
  });

  it("without deepThink, the router picks react for a single ask", () => {
    const { run, events } = runs.routedSingle!;
    expect(run.status).toBe("succeeded");
    expect(run.requestedMode).toBe("auto");
    expect(run.mode).toBe("react");
    expect(events.some((e) => e.type === "agent.thought" && e.data.agent === "router")).toBe(true);
    expect(run.result).toContain("42");
  });
});
