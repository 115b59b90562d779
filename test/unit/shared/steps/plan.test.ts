import { describe, expect, it } from "vitest";
import { plan } from "../../../../shared/steps/plan.js";
import { startRun } from "../../../../shared/steps/startRun.js";
import { lastUserText, ScriptedModel } from "../../../../shared/testing/scriptedModel.js";
import { eventTypes, planOutcome, withRun } from "../../../support/memoryRun.js";

/** "Plan" over in-memory ports: what the planner's turn leaves behind and what it hands the Map. */

describe("planStep", () => {
  it("creates the plan, stores and announces it, and dispatches its first step's tasks with their step context", async () => {
    const { ports, fakes, runId } = await withRun({ requestedMode: "plan_solve" });
    const state = await startRun({ runId }, ports);
    // The execution's history estimate starts here: its start, "Start run" and "Choose mode".
    expect(state).toEqual({ runId, mode: "plan_solve", history: 10 });

    const output = planOutcome(await plan(state, ports), "execute");
    expect(output).toMatchObject({ iteration: 0, stepIndex: 0 });
    expect(output.tasks).toEqual([
      { taskId: "s1.t1", title: "Add 2 and 2 with the calculator" },
      { taskId: "s1.t2", title: "Write the report file sum.md" },
    ]);
    const run = await ports.runs.get(runId);
    expect(run?.plan?.steps.map((s) => [s.title, s.status])).toEqual([["Compute and write", "in_progress"]]);
    expect(run?.usage.llmCalls).toBe(1);
    expect(eventTypes(fakes, runId)).toEqual(["run.started", "tool.called", "tool.result", "plan.updated"]);
    // The executors start from the step context and pending task records, written with the journal.
    const step = await ports.tasks.step(runId, 0);
    expect(step).toMatchObject({ request: "What is 2+2?", stepIndex: 0, tasks: [{ taskId: "s1.t1" }, { taskId: "s1.t2" }] });
    expect((await ports.tasks.list(runId)).map((t) => `${t.taskId}:${t.status}`)).toEqual(["s1.t1:pending", "s1.t2:pending"]);
  });

  it("the planner is offered the same tools on every call; once a plan exists, ask_user is refused instead of pausing the run", async () => {
    const { ports, runId, model } = await withRun(
      { requestedMode: "plan_solve", status: "running", mode: "plan_solve" },
      {
        model: new ScriptedModel((request) => {
          const user = lastUserText(request);
          if (!user.includes("Results of step"))
            return {
              calls: [
                { id: "p1", name: "planning", args: { command: "create", title: "T", steps: [{ title: "S", tasks: ["Add 2 and 2"] }] } },
              ],
            };
          if (request.messages.at(-1)!.role !== "tool")
            return { calls: [{ id: "q1", name: "ask_user", args: { question: "Which unit?" } }] };
          return { calls: [{ id: "f1", name: "planning", args: { command: "finish" } }] };
        }),
      },
    );
    const first = planOutcome(await plan({ runId, mode: "plan_solve" }, ports), "execute");
    await ports.tasks.put(runId, { ...(await ports.tasks.get(runId, 0, "s1.t1"))!, status: "succeeded", result: "4" });
    const next = await plan(
      { ...first, taskResults: [{ runId, iteration: 0, task: first.tasks[0]!, done: true, status: "succeeded" }] },
      ports,
    );
    expect(next).toMatchObject({ next: "summarize" });
    expect(await ports.runs.status(runId)).toBe("running");
    const names = model.requests.map((r) => r.tools!.map((t) => (t.type === "function" ? t.function.name : "")));
    expect(new Set(names.map((n) => n.join()))).toEqual(new Set(["planning,ask_user"]));
    expect(JSON.stringify(model.requests.at(-1)!.messages.at(-1))).toContain(
      "ask_user is for a requirement missing before the plan exists",
    );
  });

  it("weighs the history by the estimate in the state: no count far from the budget; near it one count, which goes on in the state", async () => {
    const { ports, fakes, runId } = await withRun({ requestedMode: "plan_solve" });
    const counts = () => fakes.executions.calls.filter((c) => c.action === "historyLength").length;
    const state = await startRun({ runId }, ports);
    const first = planOutcome(await plan(state, ports), "execute");
    expect(counts()).toBe(0);
    expect(first.history).toBe(10 + 33);

    // Back from a Map whose two executors handed back three times (13 events each), far from the budget.
    const budget = ports.settings.budgets.historyEvents;
    const taskResults = first.tasks.map((task, i) => ({ runId, iteration: 0, task, done: true, handBacks: i + 1 }));
    const next = await plan({ ...first, taskResults }, ports);
    expect(counts()).toBe(0);
    expect(next.history).toBe(10 + 33 + 3 * 13 + 7);

    // Near the budget (within a tenth of it) the execution's own count decides, and is carried on.
    fakes.executions.executions.set(ports.executions.arnFor(runId), { runId, status: "RUNNING", redrives: 0, historyLength: 500 });
    const near = planOutcome(await plan({ ...state, history: budget - 100 }, ports), "execute");
    expect(counts()).toBe(1);
    expect(near.history).toBe(500 + 33);
    // A count that leaves no room: the tasks go on in the run's next execution.
    fakes.executions.executions.get(ports.executions.arnFor(runId))!.historyLength = budget - 50;
    expect((await plan({ ...state, history: budget - 100 }, ports)).next).toBe("new_execution");
    expect(counts()).toBe(2);
  });

  it("a retried Plan replays the planner's recorded turn: the same tasks, no second model call", async () => {
    const { ports, fakes, runId, model } = await withRun({ requestedMode: "plan_solve", status: "running", mode: "plan_solve" });
    const first = await plan({ runId, mode: "plan_solve" }, ports);
    const calls = model.requests.length;
    const again = await plan({ runId, mode: "plan_solve" }, ports);
    expect(again).toEqual(first);
    expect(model.requests.length).toBe(calls);
    expect(fakes.runs.records.get(runId)?.usage.llmCalls).toBe(1);
  });

  it("back from the Map, the step's results mark it completed, and a finished plan hands over to the summarizer", async () => {
    const { ports, runId, model } = await withRun({ requestedMode: "plan_solve", status: "running", mode: "plan_solve" });
    const first = planOutcome(await plan({ runId, mode: "plan_solve" }, ports), "execute");
    for (const task of first.tasks) {
      const record = (await ports.tasks.get(runId, 0, task.taskId))!;
      await ports.tasks.put(runId, { ...record, status: "succeeded", result: `result of ${task.taskId}` });
    }
    const taskResults = first.tasks.map((task) => ({ runId, iteration: 0, task, done: true, status: "succeeded" as const }));
    const next = await plan({ ...first, taskResults }, ports);
    // The estimate: the first Plan counted its iteration of two tasks (33), this Plan and its Choice 7 more.
    expect(next).toEqual({ runId, mode: "plan_solve", next: "summarize", iteration: 1, revision: 0, history: 33 + 7 });
    const run = await ports.runs.get(runId);
    expect(run?.plan?.finished).toBe(true);
    expect(run?.plan?.steps[0]?.status).toBe("completed");
    // The planner was shown the step's results.
    const planner = model.requests.at(-1)!;
    expect(JSON.stringify(planner.messages)).toContain("result of s1.t2");
  });

  it("with plan approval, the plan waits for a person: an interrupt, the run awaiting_input, the notifier told, no task dispatched", async () => {
    const { ports, fakes, runId, model } = await withRun({
      requestedMode: "plan_solve",
      status: "running",
      mode: "plan_solve",
      approval: { plan: true, tools: "none" },
    });
    const output = planOutcome(await plan({ runId, mode: "plan_solve" }, ports), "approve");
    expect(output).not.toHaveProperty("tasks");
    expect(await ports.interrupts.get(runId, output.interruptId)).toMatchObject({ kind: "plan_approval", status: "pending" });
    expect(await ports.runs.status(runId)).toBe("awaiting_input");
    expect(fakes.notifyQueue.take()).toEqual([{ kind: "awaiting_input", runId, interruptId: output.interruptId }]);
    expect(await ports.tasks.list(runId)).toEqual([]);

    // Approved: the same plan runs, without asking the planner again.
    const calls = model.requests.length;
    await ports.interrupts.resolve(runId, output.interruptId, { decision: "approve", resolvedAt: new Date().toISOString() });
    const approved = await plan(output, ports);
    expect(approved).toMatchObject({ next: "execute", tasks: [{ taskId: "s1.t1" }, { taskId: "s1.t2" }] });
    expect(model.requests.length).toBe(calls);
  });

  it("a rejected plan goes back to the planner with the person's reason, and the revision asks again", async () => {
    const { ports, runId, model } = await withRun({
      requestedMode: "plan_solve",
      status: "running",
      mode: "plan_solve",
      approval: { plan: true, tools: "none" },
    });
    const output = planOutcome(await plan({ runId, mode: "plan_solve" }, ports), "approve");
    await ports.interrupts.resolve(runId, output.interruptId, {
      decision: "reject",
      message: "use fewer tasks",
      resolvedAt: new Date().toISOString(),
    });
    const revised = planOutcome(await plan(output, ports), "approve");
    expect(revised).toMatchObject({ revision: 1 });
    expect(revised.interruptId).not.toBe(output.interruptId);
    const planner = model.requests.at(-1)!;
    expect(JSON.stringify(planner.messages)).toContain("The user rejected this plan: use fewer tasks");
  });

  it("at the plan iteration budget, the run goes to the summarizer with the reason recorded", async () => {
    const { ports, runId } = await withRun({
      requestedMode: "plan_solve",
      status: "running",
      mode: "plan_solve",
      budgets: { maxPlanIterations: 1 },
    });
    const first = planOutcome(await plan({ runId, mode: "plan_solve" }, ports), "execute");
    const taskResults = first.tasks.map((task) => ({ runId, iteration: 0, task, done: true, status: "failed" as const }));
    const next = await plan({ ...first, taskResults }, ports);
    expect(next.next).toBe("summarize");
    expect((await ports.runs.get(runId))?.stopReason).toContain("plan iteration budget (1)");
  });
});
