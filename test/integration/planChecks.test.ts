import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/contracts/events.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * plan_solve asks and checks, through the whole local stack with the offline model: the planner
 * asks for a missing requirement before it plans; an executor asks while its sibling task goes on;
 * a step whose done_when is judged not met is revised and runs again, never marked completed.
 */
let stack: RunningStack;
let client: Client;

beforeAll(async () => {
  stack = await startStack({}, []);
  client = new Client(stack.url, stack.apiKey);
}, 300_000);

afterAll(async () => {
  await stack?.stop();
});

type PlanEvent = Extract<RunEvent, { type: "plan.updated" }>;
const plans = (events: RunEvent[]) => events.filter((e): e is PlanEvent => e.type === "plan.updated").map((e) => e.data.plan);

describe("plan_solve asks and checks", { timeout: 180_000 }, () => {
  it("the planner asks for a missing requirement before it plans, then plans with the answer", async () => {
    const { runId } = await client.submit({ input: "Ask me which city to use, then compute 2+2", mode: "plan_solve" });
    const { run, pending, events } = await client.waitForPending(runId, 1, 60_000);
    expect(run.status).toBe("awaiting_input");
    expect(pending[0]).toMatchObject({ kind: "ask_user", question: "Before I plan: which city to use?" });
    // Nothing planned or run yet.
    expect(run.plan).toBeNull();
    expect(events.some((e) => e.type === "task.started")).toBe(false);

    expect((await client.decide(runId, pending[0].interruptId, { decision: "answer", message: "Paris" })).status).toBe(202);
    const done = await client.waitForEnd(runId, 120_000);
    expect(done.run.status, JSON.stringify(done.run.error)).toBe("succeeded");
    expect(done.run.plan?.title).toContain("(you said: Paris)");
    expect(done.run.tasks.length).toBeGreaterThan(0);
  });

  it("an executor asks; its Map item waits alone while the other task of the step finishes", async () => {
    const { runId } = await client.submit({
      input: 'use ask_user {"question": "Which unit should the answer use?"} and use calculator {"expression": "6*7"}',
      mode: "plan_solve",
    });
    const { pending } = await client.waitForPending(runId, 1, 60_000);
    expect(pending[0]).toMatchObject({ kind: "ask_user", question: "Which unit should the answer use?" });
    // The sibling task ran to its end meanwhile.
    let view = await client.run(runId);
    for (let i = 0; i < 100 && !view.tasks.some((t: { status: string }) => t.status === "succeeded"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      view = await client.run(runId);
    }
    expect(view.tasks.find((t: { title: string }) => t.title.includes("6*7"))).toMatchObject({
      status: "succeeded",
      result: expect.stringContaining("42"),
    });
    expect(view.status).toBe("awaiting_input");

    expect((await client.decide(runId, pending[0].interruptId, { decision: "answer", message: "metres" })).status).toBe(202);
    const { run } = await client.waitForEnd(runId, 120_000);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.tasks.find((t: { title: string }) => t.title.includes("ask_user"))?.result).toContain("metres");
  });

  it("a step whose done_when is not met is revised and runs again; it is completed only once met", async () => {
    const { runId } = await client.submit({
      input: 'use calculator {"expression": "2+"} and use calculator {"expression": "6*7"}',
      mode: "plan_solve",
    });
    const { run, events } = await client.waitForEnd(runId, 120_000);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    const history = plans(events);
    const notMet = history.findIndex((p) => p.steps[0]?.verdict?.met === false);
    expect(notMet).toBeGreaterThan(0);
    const judged = history[notMet]!.steps[0]!;
    expect(judged.status).not.toBe("completed");
    expect(judged.verdict!.reason).toMatch(/did not succeed/);
    // Revised: the failed task became another task, the one that succeeded stands; the step ran again.
    expect(judged.tasks).toEqual([expect.stringMatching(/^Explain why this could not be done/)]);
    const started = events.filter((e): e is Extract<RunEvent, { type: "task.started" }> => e.type === "task.started");
    expect(started.filter((e) => e.data.stepIndex === 0).map((e) => e.data.iteration)).toEqual([0, 0, 1]);
    // Completed only after a verdict that it is met.
    const completed = history.findIndex((p) => p.steps[0]?.status === "completed");
    expect(completed).toBeGreaterThan(notMet);
    expect(history[completed]!.steps[0]!.verdict).toMatchObject({ met: true });
    expect(run.plan?.steps[0]).toMatchObject({ status: "completed", verdict: { met: true } });
  });
});
