import { describe, expect, it } from "vitest";
import { planPoint, taskPoint, toolResultPoint } from "../../../../../infra/console/src/forkPoints.js";
import type { ExportedRun } from "../../../../../shared/contracts/replay.js";

/** A plan_solve run's journal as its export carries it: the planner's iterations and their tasks. */
const planning = (id: string, args: unknown) => ({ id, name: "planning", arguments: JSON.stringify(args) });
const journal: ExportedRun["journal"] = [
  {
    scope: "plan#0",
    round: 0,
    kind: "llm",
    value: { toolCalls: [planning("p1", { command: "create", title: "First", steps: ["Compute 17*23", { title: "Report" }] })] },
  },
  { scope: "plan#0", round: 0, kind: "tool", callId: "p1", value: { ok: true, output: "Plan created" } },
  { scope: "plan#0", round: 1, kind: "llm", value: { toolCalls: [] } },
  { scope: "task#0#s1.t1", round: 0, kind: "llm", value: { toolCalls: [{ id: "c1", name: "calculator", arguments: "{}" }] } },
  { scope: "task#0#s1.t1", round: 0, kind: "tool", callId: "c1", value: { ok: true, output: "17*23 = 391" } },
  { scope: "task#0#s1.t1", round: 1, kind: "llm", value: { toolCalls: [{ id: "q1", name: "ask_user", arguments: "{}" }] } },
  { scope: "task#0#s1.t1", round: 1, kind: "tool", callId: "q1", value: { ok: true, output: "The user answered: metric" } },
  { scope: "plan#1", round: 0, kind: "llm", value: { toolCalls: [planning("p2", { command: "mark_step", step_index: 0 })] } },
  {
    scope: "plan#1#r1",
    round: 2,
    kind: "llm",
    value: { toolCalls: [planning("p3", { command: "update", steps: [{ title: "Report", tasks: ["Write it"], done_when: "written" }] })] },
  },
  { scope: "task#1#s2.t1", round: 0, kind: "llm", value: { toolCalls: [] } },
];

describe("where the console forks an ended run", () => {
  it("forks a tool result at the next round of its scope, its output (a question's answer alone) in the editor", () => {
    expect(toolResultPoint(journal, "c1")).toEqual({
      at: { scope: "task#0#s1.t1", round: 1 },
      output: "17*23 = 391",
      ok: true,
      question: false,
    });
    expect(toolResultPoint(journal, "q1")).toEqual({ at: { scope: "task#0#s1.t1", round: 2 }, output: "metric", ok: true, question: true });
    expect(toolResultPoint(journal, "nope")).toBeUndefined();
    // Call ids alike in two agents: the task the result's event names picks its own.
    const twice = [
      ...journal,
      { scope: "task#0#s1.t2", round: 0, kind: "tool" as const, callId: "c1", value: { ok: false, output: "other" } },
    ];
    expect(toolResultPoint(twice, "c1", "s1.t2")).toMatchObject({ at: { scope: "task#0#s1.t2", round: 1 }, output: "other", ok: false });
    expect(toolResultPoint(twice, "c1", "s1.t1")).toMatchObject({ at: { scope: "task#0#s1.t1", round: 1 }, output: "17*23 = 391" });
  });

  it("forks a task at its first round, when the journal has it", () => {
    expect(taskPoint(journal, 0, "s1.t1")).toEqual({ scope: "task#0#s1.t1", round: 0 });
    expect(taskPoint(journal, 2, "s1.t1")).toBeUndefined();
  });

  it("forks a plan step after the last plan made (create or update) up to the iteration that handed it out, its steps as the planning tool reads them", () => {
    expect(planPoint(journal, 0)).toEqual({
      at: { scope: "plan#0", round: 1 },
      title: "First",
      steps: [
        { title: "Compute 17*23", tasks: ["Compute 17*23"] },
        { title: "Report", tasks: ["Report"] },
      ],
    });
    // Iteration 1 only marked a step in its first turn; its revision updated the plan.
    const later = { at: { scope: "plan#1", round: 3 }, steps: [{ title: "Report", tasks: ["Write it"], done_when: "written" }] };
    expect(planPoint(journal, 1)).toEqual(later);
    expect(planPoint(journal, undefined)).toEqual(later);
    expect(planPoint(journal.slice(3), 0)).toBeUndefined();
  });
});
