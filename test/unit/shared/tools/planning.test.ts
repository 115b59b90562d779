import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Plan, type Plan as PlanType } from "../../../../shared/contracts/plan.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { applyPlanning, type PlanBoard, PlanningArgs, planningTool } from "../../../../shared/tools/planning.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";

const created = (): PlanType =>
  applyPlanning(undefined, {
    command: "create",
    title: "Report",
    steps: [
      { title: "Gather the facts", tasks: ["Evaluate 17*23", "Evaluate (120/8)+2^5"], done_when: "both results are known" },
      { title: "Write the report", tasks: ["Write report.md"] },
    ],
  });

describe("applyPlanning: create", () => {
  it("from string steps: each step is its own single task, not started", () => {
    const plan = applyPlanning(undefined, { command: "create", title: "T", steps: ["Look it up", "Write it down"] });
    expect(plan).toEqual({
      title: "T",
      finished: false,
      steps: [
        { title: "Look it up", tasks: ["Look it up"], doneWhen: undefined, status: "not_started", notes: undefined },
        { title: "Write it down", tasks: ["Write it down"], doneWhen: undefined, status: "not_started", notes: undefined },
      ],
    });
    expect(Plan.safeParse(plan).success).toBe(true);
  });

  it("from object steps: tasks run in parallel, done_when becomes doneWhen, a step without tasks is its own task", () => {
    const plan = applyPlanning(undefined, {
      command: "create",
      steps: [
        { title: "Gather", tasks: ["a", "b", "c"], done_when: "all three are known" },
        { title: "Write", tasks: [] },
        { title: "Check" },
      ],
    });
    expect(plan.title).toBe("Plan"); // a default title
    expect(plan.steps.map((s) => s.tasks)).toEqual([["a", "b", "c"], ["Write"], ["Check"]]);
    expect(plan.steps[0]!.doneWhen).toBe("all three are known");
    expect(plan.steps.every((s) => s.status === "not_started")).toBe(true);
    expect(plan.finished).toBe(false);
    expect(Plan.safeParse(plan).success).toBe(true);
  });

  it("mixes string and object steps", () => {
    const plan = applyPlanning(undefined, { command: "create", steps: ["one", { title: "two", tasks: ["2a", "2b"] }] });
    expect(plan.steps.map((s) => [s.title, s.tasks])).toEqual([
      ["one", ["one"]],
      ["two", ["2a", "2b"]],
    ]);
  });

  it("create replaces an existing plan: statuses start over, the old title is kept unless a new one is given", () => {
    let plan = created();
    plan = applyPlanning(plan, { command: "mark_step", step_index: 0, step_status: "completed" });
    const again = applyPlanning(plan, { command: "create", steps: ["Gather the facts"] });
    expect(again.title).toBe("Report");
    expect(again.steps).toHaveLength(1);
    expect(again.steps[0]!.status).toBe("not_started");
  });

  it("needs steps", () => {
    expect(() => applyPlanning(undefined, { command: "create", title: "no steps" })).toThrow(/create needs steps/);
  });
});

describe("applyPlanning: update", () => {
  it("keeps the status and notes of steps whose title is unchanged; new titles start not_started", () => {
    let plan = created();
    plan = applyPlanning(plan, { command: "mark_step", step_index: 0, step_status: "completed", step_notes: "391 and 47" });
    const updated = applyPlanning(plan, {
      command: "update",
      steps: [
        { title: "Gather the facts", tasks: ["Evaluate 17*23", "Evaluate (120/8)+2^5"] },
        "Double-check the figures",
        { title: "Write the report", tasks: ["Write report.md"] },
      ],
    });
    expect(updated.steps.map((s) => [s.title, s.status, s.notes])).toEqual([
      ["Gather the facts", "completed", "391 and 47"],
      ["Double-check the figures", "not_started", undefined],
      ["Write the report", "not_started", undefined],
    ]);
    expect(updated.title).toBe("Report");
    expect(Plan.safeParse(updated).success).toBe(true);
  });

  it("a renamed step starts over", () => {
    let plan = created();
    plan = applyPlanning(plan, { command: "mark_step", step_index: 0 });
    const updated = applyPlanning(plan, { command: "update", steps: ["Gather all the facts", "Write the report"] });
    expect(updated.steps[0]!.status).toBe("not_started");
  });

  it("can change the title", () => {
    expect(applyPlanning(created(), { command: "update", title: "New", steps: ["x"] }).title).toBe("New");
  });

  it("errors: no plan yet, or no steps", () => {
    expect(() => applyPlanning(undefined, { command: "update", steps: ["x"] })).toThrow(/no plan to update; use create/);
    expect(() => applyPlanning(created(), { command: "update" })).toThrow(/update needs steps/);
  });
});

describe("applyPlanning: mark_step", () => {
  it("sets one step's status (completed by default) and notes, leaves the others alone", () => {
    const plan = created();
    const marked = applyPlanning(plan, { command: "mark_step", step_index: 1, step_status: "blocked", step_notes: "no data" });
    expect(marked.steps[1]).toMatchObject({ status: "blocked", notes: "no data" });
    expect(marked.steps[0]).toEqual(plan.steps[0]);
    expect(applyPlanning(plan, { command: "mark_step", step_index: 0 }).steps[0]!.status).toBe("completed");
    // notes survive a mark without notes
    expect(applyPlanning(marked, { command: "mark_step", step_index: 1, step_status: "in_progress" }).steps[1]!.notes).toBe("no data");
  });

  it("does not modify the plan it was given", () => {
    const plan = created();
    const copy = structuredClone(plan);
    applyPlanning(plan, { command: "mark_step", step_index: 0, step_status: "completed" });
    applyPlanning(plan, { command: "finish" });
    expect(plan).toEqual(copy);
  });

  it("checks the bounds of step_index", () => {
    const plan = created(); // two steps
    expect(() => applyPlanning(plan, { command: "mark_step", step_index: 2 })).toThrow(/between 0 and 1/);
    expect(() => applyPlanning(plan, { command: "mark_step", step_index: -1 })).toThrow(/between 0 and 1/);
    expect(() => applyPlanning(plan, { command: "mark_step" })).toThrow(/step_index/);
    expect(applyPlanning(plan, { command: "mark_step", step_index: 1 }).steps[1]!.status).toBe("completed");
  });

  it("needs a plan", () => {
    expect(() => applyPlanning(undefined, { command: "mark_step", step_index: 0 })).toThrow(/no plan yet/);
  });
});

describe("applyPlanning: finish", () => {
  it("marks the plan finished and keeps its steps", () => {
    const plan = created();
    const finished = applyPlanning(plan, { command: "finish" });
    expect(finished.finished).toBe(true);
    expect(finished.steps).toEqual(plan.steps);
  });

  it("needs a plan", () => {
    expect(() => applyPlanning(undefined, { command: "finish" })).toThrow(/no plan to finish/);
  });

  it("an update after finish reopens the plan", () => {
    const finished = applyPlanning(created(), { command: "finish" });
    expect(applyPlanning(finished, { command: "update", steps: ["more"] }).finished).toBe(false);
  });
});

describe("planning tool (as the planner's model uses it)", () => {
  const call = (registry: ToolRegistry, args: unknown) =>
    registry.execute({ id: "c1", name: "planning", arguments: JSON.stringify(args) }, testToolContext({ runId: "r" }));

  it("edits the board and shows the plan; errors come back as text, the board unchanged", async () => {
    const board: PlanBoard = {};
    const registry = new ToolRegistry([planningTool(board)]);
    const first = await call(registry, { command: "create", title: "T", steps: ["a", "b"] });
    expect(first).toEqual({ ok: true, output: expect.stringContaining("Plan: T") });
    expect(first.output).toContain("1. [not_started] a");
    expect(board.plan?.steps).toHaveLength(2);

    const bad = await call(registry, { command: "mark_step", step_index: 5 });
    expect(bad.ok).toBe(false);
    expect(bad.output).toMatch(/^Error: .*between 0 and 1/);
    expect(board.plan?.steps.map((s) => s.status)).toEqual(["not_started", "not_started"]);

    const invalid = await call(registry, { command: "delete" });
    expect(invalid.ok).toBe(false);
    expect(invalid.output).toMatch(/^Error: invalid arguments for planning: command/);

    expect(await call(registry, { command: "finish" })).toEqual({ ok: true, output: "The plan is finished." });
    expect(board.plan?.finished).toBe(true);
  });
});

describe("every plan the planning tool accepts can be stored", () => {
  // The plan is stored on the run and sent in plan.updated events, both validated with the Plan
  // schema; arguments PlanningArgs accepts must therefore yield a valid Plan, or the planner's
  // state crashes after the model did nothing wrong.
  it("a long string step (accepted by PlanningArgs) still yields a valid Plan", () => {
    const args = PlanningArgs.parse({ command: "create", steps: ["x".repeat(600)] });
    const plan = applyPlanning(undefined, args);
    expect(Plan.safeParse(plan).success).toBe(true);
  });

  it("property: create/update with any accepted steps yields a valid Plan", () => {
    // The schemas constrain lengths, so the strings vary in length (over the whole allowed range;
    // fast-check would favour short strings) and shrink to the shortest failing one.
    const text = (max: number) => fc.integer({ min: 1, max }).map((n) => "x".repeat(n));
    const step = fc.oneof(
      text(700),
      fc.record({ title: text(500), tasks: fc.array(text(2000), { maxLength: 3 }), done_when: text(1000) }, { requiredKeys: ["title"] }),
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 5 }), fc.option(text(500), { nil: undefined }), (steps, title) => {
        const create = PlanningArgs.safeParse({ command: "create", steps, title });
        const update = PlanningArgs.safeParse({ command: "update", steps: [...steps].reverse() });
        fc.pre(create.success && update.success);
        const plan = applyPlanning(undefined, create.data!);
        const updated = applyPlanning(plan, update.data!);
        return Plan.safeParse(plan).success && Plan.safeParse(updated).success;
      }),
      { numRuns: 100 },
    );
  });
});
