import { describe, expect, it } from "vitest";
import { RunView } from "../../../../shared/contracts/responses.js";
import { BadRequestError } from "../../../../shared/errors.js";
import { inlineBeginning } from "../../../../shared/memory/largeText.js";
import type { FileMeta } from "../../../../shared/ports/files.js";
import type { TaskRecord } from "../../../../shared/ports/tasks.js";
import { cutToGraphemes } from "../../../../shared/text/bytes.js";
import { runView } from "../../../../shared/views/runView.js";
import { TASK_PREVIEW_BYTES, type TaskView, taskPage, taskView, VIEW_BUDGET_BYTES } from "../../../../shared/views/taskView.js";
import { runRecord } from "../../../support/records.js";

const links = { api: "https://api.test", stream: "https://stream.test", console: false };
const bytes = (text: string) => Buffer.byteLength(text);

/** 100 KB of Chinese (3 bytes a character): as much as a task record keeps inline. */
const cjkResult = (n: number) => `${"一二三四五六七八九十"[n % 10]}项任务的结果，销售额增长了百分之十二。`.repeat(2_000).slice(0, 33_333);

function task(iteration: number, index: number, result?: string): TaskRecord {
  return {
    iteration,
    stepIndex: iteration,
    taskId: `s${iteration + 1}.t${index + 1}`,
    title: `任务 ${index + 1}`,
    text: `任务 ${index + 1}`,
    status: result === undefined ? "pending" : "succeeded",
    ...(result === undefined ? {} : { result, startedAt: "2026-11-28T08:00:00.000Z", endedAt: "2026-11-28T08:01:00.000Z" }),
  };
}

describe("a run view of 300 tasks, each with a 100 KB Chinese result", () => {
  const tasks = Array.from({ length: 300 }, (_, i) => task(Math.floor(i / 100), i % 100, cjkResult(i)));
  const run = runRecord("run_big", { status: "succeeded", requestedMode: "plan_solve", mode: "plan_solve" });

  it("stays within its byte budget (counted in UTF-8 bytes), previewing each result and paging the rest", () => {
    expect(bytes(tasks[0]!.result!)).toBe(99_999);
    const view = runView(run, tasks, [], [], links);
    const body = JSON.stringify(view);
    expect(bytes(body)).toBeLessThanOrEqual(VIEW_BUDGET_BYTES);
    // Whole, the tasks alone would be 30 MB: five times what Lambda may answer.
    expect(tasks.reduce((sum, t) => sum + bytes(t.result!), 0)).toBeGreaterThan(6 * 1024 * 1024 * 4);
    expect(view.taskCount).toBe(300);
    expect(view.tasks.length).toBeGreaterThan(0);
    expect(view.tasks.length).toBeLessThan(300);
    expect(view.nextTasksCursor).toEqual(expect.any(String));
    expect(() => RunView.parse(view)).not.toThrow();
  });

  it("pages on from the cursor: every task once, in order, each page within the budget", () => {
    const seen: TaskView[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const page = taskPage(tasks, { cursor: cursor ?? undefined, limit: 500 }, VIEW_BUDGET_BYTES, (t) =>
        taskView(t, [], links.api, "run_big"),
      );
      expect(bytes(JSON.stringify(page))).toBeLessThanOrEqual(VIEW_BUDGET_BYTES);
      seen.push(...page.tasks);
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(seen.map((t) => t.taskId)).toEqual(tasks.map((t) => t.taskId));
    expect(pages).toBeGreaterThan(1);
  });

  it("cuts each preview between two characters, says so and how long the whole is, and links the whole", () => {
    const [first] = runView(run, tasks, [], [], links).tasks;
    const preview = first!.result!;
    expect(bytes(preview)).toBeLessThanOrEqual(TASK_PREVIEW_BYTES);
    const [shown, note] = preview.split("\n\n[preview: ");
    expect(tasks[0]!.result!.startsWith(shown!)).toBe(true);
    expect(shown).not.toContain("\uFFFD");
    expect(`[preview: ${note}`).toBe(`[preview: the first ${bytes(shown!)} of 99999 bytes; the whole result is at links.result]`);
    expect(first).toMatchObject({
      resultBytes: 99_999,
      resultCut: true,
      links: { result: "https://api.test/v1/runs/run_big/tasks/s1.t1/result" },
    });
  });

  it("honours a smaller limit, and refuses a cursor it did not give out", () => {
    const page = taskPage(tasks, { limit: 2 }, VIEW_BUDGET_BYTES, (t) => taskView(t, [], links.api, "run_big"));
    expect(page.tasks.map((t) => t.taskId)).toEqual(["s1.t1", "s1.t2"]);
    const next = taskPage(tasks, { cursor: page.nextCursor!, limit: 1 }, VIEW_BUDGET_BYTES, (t) => taskView(t, [], links.api, "run_big"));
    expect(next.tasks.map((t) => t.taskId)).toEqual(["s1.t3"]);
    for (const cursor of ["nonsense", Buffer.from('{"k":1}').toString("base64url"), Buffer.from("[1.5,2]").toString("base64url")])
      expect(() => taskPage(tasks, { cursor, limit: 2 }, VIEW_BUDGET_BYTES, (t) => taskView(t, [], links.api, "run_big"))).toThrow(
        BadRequestError,
      );
  });
});

describe("a task's preview", () => {
  it("is the whole result when it is short, not marked as cut", () => {
    const view = taskView(task(0, 0, "四。"), [], links.api, "run_1");
    expect(view).toMatchObject({ result: "四。", resultBytes: 6, resultCut: false });
  });

  it("of a running task is null, with no size", () => {
    expect(taskView(task(0, 0), [], links.api, "run_1")).toMatchObject({ result: null, resultBytes: null, resultCut: false });
  });

  it("of a result its record keeps in part tells the size of the whole, kept in the run's file", () => {
    const whole = "长".repeat(100_000); // 300,000 bytes
    const file: FileMeta = { name: "result-0-s1.t1.md", description: "", contentType: "text/markdown", bytes: 300_000, createdAt: "" };
    const view = taskView(task(0, 0, inlineBeginning(whole, file.name)), [file], links.api, "run_1");
    expect(view.resultCut).toBe(true);
    expect(view.resultBytes).toBe(300_000);
    expect(view.result).toMatch(/^长+\n\n\[preview: the first \d+ of 300000 bytes; the whole result is at links\.result\]$/);
  });

  it("never splits a grapheme: an emoji with its skin tone, a family, a flag is kept or left out whole", () => {
    for (const grapheme of ["👍🏽", "👨‍👩‍👧", "🇫🇷", "é"]) {
      const text = `${"a".repeat(10)}${grapheme}b`;
      for (let limit = 10; limit < 10 + bytes(grapheme); limit++) expect(cutToGraphemes(text, limit)).toBe("a".repeat(10));
      expect(cutToGraphemes(text, 10 + bytes(grapheme))).toBe(`${"a".repeat(10)}${grapheme}`);
    }
  });
});
