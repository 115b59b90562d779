import { describe, expect, it } from "vitest";
import { priorResultsOf } from "../../../../shared/agent/executor.js";
import type { TaskRecord } from "../../../../shared/ports/tasks.js";

const task = (taskId: string, result: string, status: TaskRecord["status"] = "succeeded"): TaskRecord => ({
  iteration: 0,
  stepIndex: 0,
  taskId,
  title: `Task ${taskId}`,
  text: `Task ${taskId}`,
  status,
  result,
});

describe("priorResultsOf: earlier results for the next step's executors", () => {
  const table = Array.from({ length: 400 }, (_, i) => `| row ${i} | ${"x".repeat(40)} |`).join("\n");

  it("passes results on whole when they fit the budget (a 20,000-character table included)", () => {
    const { lines, files } = priorResultsOf([task("s1.t1", table), task("s1.t2", "short", "failed")], 1, ["- earlier: 7"], 200_000);
    expect(lines).toEqual(["- earlier: 7", `- Task s1.t1: ${table}`, "- Task s1.t2: FAILED: short"]);
    expect(files).toEqual([]);
  });

  it("cuts what does not fit, saying so and naming the run file that holds it whole, which it asks to be written", () => {
    const { lines, files } = priorResultsOf([task("s1.t1", table), task("s1.t2", "short")], 1, [], 6_000);
    expect(lines[1]).toBe("- Task s1.t2: short");
    expect(lines[0]!.length).toBeLessThan(6_500);
    expect(lines[0]).toContain(`[cut at 5995 of ${table.length} characters; the whole result is the run's file result-0-s1.t1.md`);
    expect(lines[0]).toContain('read_artifact {"filename": "result-0-s1.t1.md"}');
    expect(files).toEqual([{ name: "result-0-s1.t1.md", text: table, title: "Task s1.t1" }]);
  });

  it("does not rewrite a result the task already keeps as a file (its record holds the beginning and a pointer)", () => {
    const kept = `${"y".repeat(100_000)}\n\n[cut at 100000 of 250000 characters: the whole text is the run's file result-0-s1.t1.md]`;
    const { lines, files } = priorResultsOf([task("s1.t1", kept)], 1, [], 10_000);
    expect(lines[0]).toContain("result-0-s1.t1.md");
    expect(files).toEqual([]);
  });
});
