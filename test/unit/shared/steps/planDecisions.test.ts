import { describe, expect, it } from "vitest";
import type { Interrupt } from "../../../../shared/contracts/interrupts.js";
import type { Plan } from "../../../../shared/contracts/plan.js";
import type { TaskRecord } from "../../../../shared/ports/tasks.js";
import {
  fingerprint,
  iterationBudget,
  judged,
  needsPlanApproval,
  nextStepOf,
  planApproval,
  stepToJudge,
} from "../../../../shared/steps/planDecisions.js";

/** The planner step's decisions, each on its own: no ports, no model. */

const plan = (steps: Partial<Plan["steps"][number]>[], finished = false): Plan => ({
  title: "Report",
  finished,
  steps: steps.map((s, i) => ({ title: `Step ${i + 1}`, tasks: [`task ${i + 1}`], status: "not_started", ...s })),
});

const AT = "2026-11-27T00:00:00Z";

const approval = (fields: Partial<Interrupt>): Interrupt => ({
  schemaVersion: 1,
  interruptId: "i1",
  runId: "run_1",
  kind: "plan_approval",
  status: "pending",
  summary: "",
  createdAt: AT,
  ...fields,
});

const task = (taskId: string, status: TaskRecord["status"], result?: string): TaskRecord => ({
  iteration: 0,
  stepIndex: 0,
  taskId,
  title: `Title of ${taskId}`,
  text: `Text of ${taskId}`,
  status,
  result,
});

describe("planApproval", () => {
  const current = plan([{}, {}]);

  it("an approval runs the plan as it is: its fingerprint is what was approved", () => {
    expect(planApproval(approval({ status: "resolved", resolution: { decision: "approve", resolvedAt: AT } }), current)).toEqual({
      approvedPlan: fingerprint(current),
    });
  });

  it("a rejection sends the planner back with the person's reason; a timeout or a missing decision says what happened", () => {
    const rejected = approval({ status: "resolved", resolution: { decision: "reject", message: "too long", resolvedAt: AT } });
    expect(planApproval(rejected, current)).toEqual({
      feedback: "The user rejected this plan: too long. Revise it with the planning tool.",
    });
    expect(planApproval(approval({ status: "timed_out" }), current)).toEqual({
      feedback: "The user rejected this plan: the approval timed_out. Revise it with the planning tool.",
    });
    expect(planApproval(approval({ status: "pending" }), current)).toEqual({
      feedback: "The user rejected this plan. Revise it with the planning tool.",
    });
  });

  it("an answer to the planner's own question decides nothing about the plan", () => {
    expect(
      planApproval(approval({ kind: "ask_user", status: "resolved", resolution: { decision: "answer", resolvedAt: AT } }), undefined),
    ).toBeUndefined();
  });
});

describe("stepToJudge", () => {
  it("puts the step just run back in progress (its old verdict cleared) and lists every task's result, failures marked", () => {
    const ran = plan([{ status: "completed" }, { status: "in_progress", doneWhen: "both figures", verdict: { met: false, reason: "x" } }]);
    const judging = stepToJudge(ran, 1, [task("s2.t1", "succeeded", "391"), task("s2.t2", "failed", "no input")], 8_000);
    expect(judging?.plan.steps.map((s) => [s.status, s.verdict])).toEqual([
      ["completed", undefined],
      ["in_progress", undefined],
    ]);
    expect(judging?.executed).toEqual({ title: "Step 2", index: 1, failed: 1, undone: 0 });
    expect(judging?.resultsText.split("\n").slice(0, 3)).toEqual([
      "Results of step 2 (Step 2):",
      "- [s2.t1] Title of s2.t1: 391",
      "- [s2.t2] Title of s2.t2: FAILED: no input",
    ]);
    expect(judging?.resultsText).toContain('against its done_when (both figures): call planning {"command": "check", "step_index": 1');
  });

  it("results over half the prompt budget are cut to share it", () => {
    const long = "x".repeat(100_000);
    const text = stepToJudge(plan([{}]), 0, [task("s1.t1", "succeeded", long)], 1_000)?.resultsText ?? "";
    expect(text.length).toBeLessThan(10_000);
  });

  it("nothing to judge when no step ran or the plan no longer has it", () => {
    expect(stepToJudge(plan([{}]), undefined, [task("s1.t1", "succeeded")], 8_000)).toBeUndefined();
    expect(stepToJudge(plan([{}]), 3, [task("s1.t1", "succeeded")], 8_000)).toBeUndefined();
    expect(stepToJudge(undefined, 0, [task("s1.t1", "succeeded")], 8_000)).toBeUndefined();
  });
});

describe("judged", () => {
  const executed = { title: "Step 1", index: 0, failed: 0 };

  it("follows the planner's check: met → completed, not met → runs again", () => {
    expect(judged(plan([{ status: "in_progress", verdict: { met: true, reason: "" } }]), executed).steps[0].status).toBe("completed");
    expect(judged(plan([{ status: "in_progress", verdict: { met: false, reason: "" } }]), executed).steps[0].status).toBe("not_started");
  });

  it("without a check, by the tasks' outcomes: a failed task blocks the step and says how many failed", () => {
    expect(judged(plan([{ status: "in_progress" }]), executed).steps[0].status).toBe("completed");
    expect(judged(plan([{ status: "in_progress" }]), { ...executed, failed: 2 }).steps[0]).toMatchObject({
      status: "blocked",
      notes: "2 task(s) failed",
    });
  });

  it("a step whose task a person left undone says so, whether the planner judged it met or not", () => {
    const results = [
      task("s1.t1", "succeeded", "391"),
      { ...task("s1.t2", "succeeded", "Rejected by the user."), undone: [{ tool: "write_artifact", decision: "reject" as const }] },
    ];
    const judging = stepToJudge(plan([{ status: "in_progress", undone: 3 }]), 0, results, 8_000)!;
    // The planner reads which task was left undone, and why; the step's last count is cleared while it is judged.
    expect(judging.resultsText).toContain(
      "- [s1.t2] Title of s1.t2: (not done as planned: the user rejected write_artifact) Rejected by the user.",
    );
    expect(judging.resultsText).toContain("- [s1.t1] Title of s1.t1: 391");
    expect(judging.plan.steps[0]!.undone).toBeUndefined();
    expect(judging.executed.undone).toBe(1);
    // Met by the planner's check (its status already completed): still marked undone.
    const checked = {
      ...judging.plan,
      steps: [{ ...judging.plan.steps[0]!, status: "completed" as const, verdict: { met: true, reason: "" } }],
    };
    expect(judged(checked, judging.executed).steps[0]).toMatchObject({ status: "completed", undone: 1 });
    // Not judged: completed, and undone.
    expect(judged(judging.plan, judging.executed).steps[0]).toMatchObject({ status: "completed", undone: 1 });
    // Nothing declined: no mark.
    expect(judged(judging.plan, { ...judging.executed, undone: 0 }).steps[0]!.undone).toBeUndefined();
  });

  it("finds the step by its title when the planner moved it, and leaves a step the planner marked itself", () => {
    const moved = plan([{ title: "New first" }, { title: "Step 1", status: "in_progress" }]);
    expect(judged(moved, executed).steps.map((s) => s.status)).toEqual(["not_started", "completed"]);
    expect(judged(plan([{ status: "blocked" }]), executed).steps[0].status).toBe("blocked");
  });
});

describe("iterationBudget and needsPlanApproval", () => {
  it("the last iteration's plan that is not finished records why the run stopped; a finished one does not", () => {
    expect(iterationBudget(plan([{}]), 2, 3)).toEqual({ left: true });
    expect(iterationBudget(plan([{}]), 3, 3)).toEqual({
      left: false,
      stopReason: "The plan iteration budget (3) was reached before the plan was finished; the answer covers what was done.",
    });
    expect(iterationBudget(plan([{}], true), 3, 3)).toEqual({ left: false });
  });

  it("asks a person only when the run wants it, the plan goes on, and it is not the plan approved (statuses aside)", () => {
    const current = plan([{}, {}]);
    expect(needsPlanApproval(current, true, undefined, true)).toBe(true);
    expect(needsPlanApproval(current, false, undefined, true)).toBe(false);
    expect(needsPlanApproval(current, true, fingerprint(current), true)).toBe(false);
    expect(
      needsPlanApproval(
        { ...current, steps: current.steps.map((s) => ({ ...s, status: "completed" as const })) },
        true,
        fingerprint(current),
        true,
      ),
    ).toBe(false);
    expect(needsPlanApproval(plan([{}, { tasks: ["other"] }]), true, fingerprint(current), true)).toBe(true);
    expect(needsPlanApproval(current, true, undefined, false)).toBe(false);
    expect(needsPlanApproval(plan([{}], true), true, undefined, true)).toBe(false);
  });
});

describe("nextStepOf", () => {
  it("runs the first step not done, marked in progress, its tasks named by iteration and position", () => {
    const next = nextStepOf(plan([{ status: "completed" }, { tasks: ["a", "b".repeat(400)] }, {}]), 1, true);
    expect(next.stepIndex).toBe(1);
    expect(next.plan.steps.map((s) => s.status)).toEqual(["completed", "in_progress", "not_started"]);
    expect(next.tasks.map((t) => [t.taskId, t.title.length, t.text.length])).toEqual([
      ["s2.t1", 1, 1],
      ["s2.t2", 300, 400],
    ]);
  });

  it("at most 40 tasks go to the Map at once", () => {
    const tasks = Array.from({ length: 45 }, (_, i) => `task ${i}`);
    expect(nextStepOf(plan([{ tasks }]), 0, true).tasks).toHaveLength(40);
  });

  it("nothing runs once the plan is finished, every step is done, or the budget is spent", () => {
    for (const [current, left] of [
      [plan([{}], true), true],
      [plan([{ status: "completed" }, { status: "blocked" }]), true],
      [plan([{}]), false],
    ] as const) {
      const next = nextStepOf(current, 0, left);
      expect(next).toEqual({ stepIndex: -1, plan: current, tasks: [] });
    }
  });
});
