import { describe, expect, it } from "vitest";
import { z } from "zod";
import { budgetText } from "../../../../infra/display/budget.js";
import { decidePause } from "../../../../shared/agent/decide.js";
import type { RunBudget } from "../../../../shared/contracts/budget.js";
import { agentTurn } from "../../../../shared/steps/agentTurn.js";
import { finalize } from "../../../../shared/steps/finalize.js";
import { plan } from "../../../../shared/steps/plan.js";
import { summarize } from "../../../../shared/steps/summarize.js";
import { ScriptedModel } from "../../../../shared/testing/scriptedModel.js";
import { defineTool } from "../../../../shared/tools/tool.js";
import { runView } from "../../../../shared/views/runView.js";
import { eventTypes, planOutcome, withRun } from "../../../support/memoryRun.js";

/**
 * A ReAct run with a token budget, over the in-memory ports: each model call reserves its worst
 * case first; at the budget the run pauses for a person (an extension lets it finish) or, with
 * "deliver", ends budget_exhausted with a summary. No call that would pass the budget is made.
 */

/** A read tool whose ~2,000-token result makes each round's prompt much larger than the last. */
const lookup = defineTool({
  name: "lookup",
  description: "Looks a topic up.",
  access: "read",
  parameters: z.object({ topic: z.string() }),
  run: async ({ topic }) => `${topic}: ${"lorem ipsum dolor sit amet ".repeat(400)}`,
});

const script = () =>
  new ScriptedModel([
    { text: "Looking up the first topic.", calls: [{ name: "lookup", args: { topic: "alpha" } }] },
    { text: "Looking up the second topic.", calls: [{ name: "lookup", args: { topic: "beta" } }] },
    { text: "Alpha and beta, both found." },
  ]);

const settings = { model: { roles: { react: { maxOutputTokens: 200 } } } };

async function budgetedRun(budget: RunBudget) {
  const model = script();
  const setup = await withRun({ status: "running", budget }, { model, tools: [lookup], settings });
  return { ...setup, turn: () => agentTurn({ runId: setup.runId, mode: "react" }, setup.ports) };
}

/** The worst case of the run's first call: what a run whose budget is one token is refused. */
async function firstReservation(): Promise<number> {
  const { ports, runId, turn, model } = await budgetedRun({ tokens: 1, onExhausted: "pause" });
  const output = await turn();
  expect(model.requests).toHaveLength(0);
  const interrupt = await ports.interrupts.get(runId, output.interruptId ?? "");
  expect(interrupt).toMatchObject({ kind: "budget", status: "pending" });
  return (interrupt?.arguments as { nextCall?: { tokens: number } } | undefined)?.nextCall?.tokens ?? 0;
}

describe("token budgets of a run", () => {
  it("the run pauses at its budget without making the call; an extension lets it finish", async () => {
    const first = await firstReservation();
    // Room for the first call only: the second one's prompt carries ~2,000 tokens more.
    const { ports, fakes, runId, turn, model, run } = await budgetedRun({ tokens: first + 500, onExhausted: "pause" });
    const paused = await turn();
    expect(model.requests).toHaveLength(1);
    expect(paused.interruptId).toBeDefined();
    expect((await ports.runs.get(runId))?.status).toBe("awaiting_input");
    const spent = (await fakes.spend.totals({ tenantId: run.tenantId, runId, at: new Date() })).run.tokens;
    expect(spent).toBe(15); // the first call as the provider reported it (10 + 5), its reservation settled
    // The run's view (GET /v1/runs/{id}, the CLI, the console) shows the budget and what was spent.
    const view = runView((await ports.runs.get(runId))!, [], [], [], { api: "", stream: "", console: false }).budget;
    expect(view).toEqual({ tokens: first + 500, onExhausted: "pause", spent: { tokens: 15 } });
    expect(budgetText(view!)).toBe(`15 tokens spent of ${first + 500} tokens (at the budget: pause)`);

    // Bad input changes nothing: a zero extension is refused.
    await expect(
      decidePause(ports, run.tenantId, (await ports.runs.get(runId))!, paused.interruptId!, {
        decision: "approve",
        arguments: { tokens: 0 },
      }),
    ).rejects.toMatchObject({ statusCode: 400 });
    expect((await ports.runs.get(runId))?.budget?.tokens).toBe(first + 500);

    await decidePause(ports, run.tenantId, (await ports.runs.get(runId))!, paused.interruptId!, {
      decision: "approve",
      arguments: { tokens: 20_000 },
    });
    expect((await ports.runs.get(runId))?.budget?.tokens).toBe(first + 20_500);
    const done = await turn();
    expect(done.done).toBe(true);
    expect(model.requests).toHaveLength(3);
    await finalize({ runId }, ports);
    expect((await ports.runs.get(runId))?.status).toBe("succeeded");
    expect((await fakes.spend.totals({ tenantId: run.tenantId, runId, at: new Date() })).run.tokens).toBe(45);
  });

  it('with "deliver", the run ends budget_exhausted with a summary of what it did, and no call past the budget', async () => {
    const first = await firstReservation();
    const { ports, fakes, runId, turn, model } = await budgetedRun({ tokens: first + 500, onExhausted: "deliver" });
    const output = await turn();
    expect(output.done).toBe(true);
    expect(model.requests).toHaveLength(1);
    await finalize({ runId }, ports);
    const ended = await ports.runs.get(runId);
    expect(ended?.status).toBe("budget_exhausted");
    expect(ended?.result).toContain("Stopped at the run's budget");
    expect(ended?.result).toContain("Looking up the first topic.");
    expect(ended?.result).toContain("lookup (1)");
    expect(eventTypes(fakes, runId).at(-1)).toBe("run.budget_exhausted");
    expect(fakes.events.all(runId).at(-1)).toMatchObject({ data: { stopReason: expect.stringContaining(`${first + 500} tokens`) } });
  });

  it("a rejected extension ends the run with the summary as well", async () => {
    const { ports, runId, turn, run, model } = await budgetedRun({ tokens: 1, onExhausted: "pause" });
    const paused = await turn();
    await decidePause(ports, run.tenantId, (await ports.runs.get(runId))!, paused.interruptId!, { decision: "reject" });
    expect((await turn()).done).toBe(true);
    await finalize({ runId }, ports);
    expect((await ports.runs.get(runId))?.status).toBe("budget_exhausted");
    expect(model.requests).toHaveLength(0);
  });
});

describe("a plan_solve run at its budget", () => {
  it('with "deliver", a planner refused its first call hands over to a summary written without a model call; the run ends budget_exhausted', async () => {
    const { ports, fakes, runId, model } = await withRun({
      requestedMode: "plan_solve",
      mode: "plan_solve",
      status: "running",
      budget: { tokens: 1, onExhausted: "deliver" },
    });
    planOutcome(await plan({ runId, mode: "plan_solve" }, ports), "summarize");
    await summarize({ runId }, ports);
    await finalize({ runId }, ports);
    expect(model.requests).toHaveLength(0);
    const ended = await ports.runs.get(runId);
    expect(ended?.status).toBe("budget_exhausted");
    expect(ended?.result).toContain("Stopped at the run's budget (1 tokens)");
    expect(eventTypes(fakes, runId).at(-1)).toBe("run.budget_exhausted");
  });

  it("an executor that delivered at the budget: the planner plans no more and the summarizer makes no call", async () => {
    const { ports, runId, model } = await withRun({
      requestedMode: "plan_solve",
      mode: "plan_solve",
      status: "running",
      budget: { tokens: 1_000_000, onExhausted: "deliver" },
    });
    const first = planOutcome(await plan({ runId, mode: "plan_solve" }, ports), "execute");
    const calls = model.requests.length;
    const exhausted = "Stopped at the run's budget (1000000 tokens): the next model call could need 900 tokens.";
    await ports.runs.update(runId, { budget: { ...(await ports.runs.get(runId))!.budget!, exhausted } });
    await Promise.all(
      first.tasks.map(async (task) =>
        ports.tasks.put(runId, { ...(await ports.tasks.get(runId, 0, task.taskId))!, status: "failed", result: "half done" }),
      ),
    );
    const taskResults = first.tasks.map((task) => ({ runId, iteration: 0, task, done: true, status: "failed" as const }));
    planOutcome(await plan({ ...first, taskResults }, ports), "summarize");
    await ports.tasks.put(runId, { ...(await ports.tasks.get(runId, 0, first.tasks[0]!.taskId))!, status: "succeeded", result: "4" });
    await summarize({ runId }, ports);
    await finalize({ runId }, ports);
    expect(model.requests).toHaveLength(calls);
    const ended = await ports.runs.get(runId);
    expect(ended?.status).toBe("budget_exhausted");
    expect(ended?.result).toContain(exhausted);
  });
});

describe("what budgets write", () => {
  it("a run with no budget anywhere writes no spend counter; a run budget writes two per model call (reserve, settle), a daily budget two more", async () => {
    const counted = async (budget: RunBudget | undefined) => {
      const model = script();
      const setup = await withRun({ status: "running", ...(budget ? { budget } : {}) }, { model, tools: [lookup], settings });
      expect((await agentTurn({ runId: setup.runId, mode: "react" }, setup.ports)).done).toBe(true);
      return { calls: model.requests.length, writes: setup.fakes.spend.writes };
    };
    expect(await counted(undefined)).toEqual({ calls: 3, writes: 0 });
    expect(await counted({ tokens: 1_000_000, onExhausted: "pause" })).toEqual({ calls: 3, writes: 6 });
    expect(await counted({ tokens: 1_000_000, onExhausted: "pause", day: { tokens: 5_000_000 } })).toEqual({ calls: 3, writes: 12 });
  });
});
