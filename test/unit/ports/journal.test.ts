import { describe, expect, it } from "vitest";
import { ScopeJournal } from "../../../shared/agent/scopeJournal.js";
import type { JournalCommit, RunJournal } from "../../../shared/ports/journal.js";
import type { Tasks } from "../../../shared/ports/tasks.js";
import { Journal } from "../../../shared/store/journal.js";
import { RunStore } from "../../../shared/store/runs.js";
import { TaskStore } from "../../../shared/store/tasks.js";
import { MemoryJournal } from "../../../shared/testing/memoryJournal.js";
import { MemoryRuns } from "../../../shared/testing/memoryRuns.js";
import { MemoryTasks } from "../../../shared/testing/memoryTasks.js";
import { freshId, useDynalite } from "../../support/dynalite.js";

/** The journal port's contract (with the tasks port, whose records it writes in its batches). */

const dynamo = useDynalite();

describe.each([
  {
    name: "in memory",
    make: (): { journal: RunJournal; tasks: Tasks } => {
      const tasks = new MemoryTasks(new MemoryRuns());
      return { journal: new MemoryJournal(tasks), tasks };
    },
  },
  { name: "DynamoDB adapter on dynalite", make: () => ({ journal: new Journal(dynamo.table(), 1), tasks: new TaskStore(dynamo.table(), 1) }) },
])("journal port: $name", ({ make }) => {
  it("a step that runs again replays what was recorded instead of producing it again", async () => {
    const { journal } = make();
    const runId = freshId("run");
    let produced = 0;
    const first = await journal.load(runId, "react");
    expect(first.size).toBe(0);
    const answer = { content: "4", toolCalls: [], usage: { promptTokens: 3, completionTokens: 1 } };
    expect(await first.once(0, "llm", "", async () => (produced++, answer))).toEqual({ value: answer, replayed: false });

    const again = await journal.load(runId, "react");
    expect(await again.once(0, "llm", "", async () => (produced++, { content: "other" }))).toEqual({ value: answer, replayed: true });
    expect(produced).toBe(1);
    expect(again.usage()).toEqual({ promptTokens: 3, completionTokens: 1, llmCalls: 1, toolCalls: 0 });
  });

  it("a deferred record is written only by the next flush, together with other items", async () => {
    const { journal, tasks } = make();
    const runId = freshId("run");
    const scope = await journal.load(runId, "task#0#s1.t1");
    await scope.once(0, "tool", "call_1", async () => ({ ok: true, output: "done" }), { defer: true });
    expect((await journal.load(runId, "task#0#s1.t1")).has(0, "tool", "call_1")).toBe(false);
    const task = { iteration: 0, stepIndex: 0, taskId: "s1.t1", title: "Add", text: "Add 2 and 2", status: "succeeded" as const, result: "4" };
    await scope.flush({ tasks: [task] });
    expect((await journal.load(runId, "task#0#s1.t1")).get(0, "tool", "call_1")).toEqual({ ok: true, output: "done" });
    expect(await tasks.get(runId, 0, "s1.t1")).toMatchObject(task);
  });

  it("a scope loads its own records and those of scopes under it, not a sibling's", async () => {
    const { journal } = make();
    const runId = freshId("run");
    for (const scope of ["plan#2", "plan#2#r1", "plan#20", "react"]) {
      const j = await journal.load(runId, scope);
      j.record(0, "memo", "", scope);
      await j.flush();
    }
    const plan = await journal.load(runId, "plan#2");
    expect(plan.get(0, "memo")).toBe("plan#2");
    expect(plan.scoped("plan#2#r1").get(0, "memo")).toBe("plan#2#r1");
    expect(plan.size).toBe(2);
  });

  it("a record larger than a table item (a 400 KB model answer) replays whole", async () => {
    const { journal } = make();
    const runId = freshId("run");
    const big = { content: "x".repeat(450_000), toolCalls: [] };
    const scope = await journal.load(runId, "react");
    await scope.once(0, "llm", "", async () => big);
    expect((await journal.load(runId, "react")).get(0, "llm")).toEqual(big);
  });

  it("task records list in iteration then task-number order (t10 after t9), one iteration or all", async () => {
    const { tasks } = make();
    const runId = freshId("run");
    for (const [iteration, taskId] of [[1, "s2.t1"], [0, "s1.t10"], [0, "s1.t9"]] as const) {
      await tasks.put(runId, { iteration, stepIndex: iteration, taskId, title: taskId, text: taskId, status: "pending" });
    }
    expect((await tasks.list(runId)).map((t) => t.taskId)).toEqual(["s1.t9", "s1.t10", "s2.t1"]);
    expect((await tasks.list(runId, 1)).map((t) => t.taskId)).toEqual(["s2.t1"]);
    expect(await tasks.get(runId, 5, "s6.t1")).toBeUndefined();
  });
});

describe.each([
  { name: "in memory", make: () => { const runs = new MemoryRuns(); const tasks = new MemoryTasks(runs); return { runs, tasks, journal: new MemoryJournal(tasks) }; } },
  { name: "DynamoDB adapter on dynalite", make: () => ({ runs: new RunStore(dynamo.table(), 1), tasks: new TaskStore(dynamo.table(), 1), journal: new Journal(dynamo.table(), 1) }) },
])("tasks port: $name", ({ make }) => {
  it("an executor reads its step's context and the run's status in one call", async () => {
    const { runs, tasks, journal } = make();
    const runId = freshId("run");
    await runs.create({ schemaVersion: 1, runId, tenantId: "t1", sessionId: "s1", status: "running", requestedMode: "plan_solve", input: "x", metadata: {}, usage: { promptTokens: 0, completionTokens: 0, llmCalls: 0, toolCalls: 0 }, executionArn: "arn", createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z" });
    const step = { iteration: 0, stepIndex: 0, tenantId: "t1", request: "x", priorResults: [], maxRounds: 5, tasks: [{ taskId: "s1.t1", title: "a", text: "a" }] };
    await (await journal.load(runId, "plan#0")).flush({ step });
    expect(await tasks.stepAndRunStatus(runId, 0)).toEqual({ step: expect.objectContaining(step), status: "running" });
    expect(await tasks.stepAndRunStatus(runId, 1)).toEqual({ step: undefined, status: "running" });
  });
});

describe("one scope's flushes", () => {
  /** A writer whose writes wait until released, one by one, and record what they wrote. */
  function gatedWriter(fail: (call: number) => boolean = () => false) {
    const written: string[][] = [];
    const gates: (() => void)[] = [];
    const writer = {
      commit: async (_runId: string, { entries }: JournalCommit) => {
        const call = written.push(entries.map((entry) => entry.id.split("#").slice(1).join("#")));
        await new Promise<void>((resolve) => gates.push(resolve));
        if (fail(call)) throw new Error("ProvisionedThroughputExceededException");
      },
    };
    return { writer, written, releaseNext: () => gates.shift()?.() };
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

  it("are written one after another: a later round is never stored before the rounds under it, and an empty flush waits for the one in flight", async () => {
    const { writer, written, releaseNext } = gatedWriter();
    const scope = new ScopeJournal(writer, "run_1", "react", new Map());
    scope.record(0, "llm", "", "first");
    const first = scope.flush();
    await settle(); // round 1 is recorded while round 0 is being written
    scope.record(1, "llm", "", "second");
    const second = scope.flush();
    let emptyDone = false;
    const empty = scope.flush().then(() => (emptyDone = true));
    await settle();
    expect(written).toEqual([["0000#llm"]]);
    releaseNext();
    await first;
    await settle();
    expect(written).toEqual([["0000#llm"], ["0001#llm"]]);
    expect(emptyDone).toBe(false);
    releaseNext();
    await Promise.all([second, empty]);
    expect(emptyDone).toBe(true);
  });

  it("a failed flush fails its caller; its records are written by the next flush, before that flush's own", async () => {
    const { writer, written, releaseNext } = gatedWriter((call) => call === 1);
    const scope = new ScopeJournal(writer, "run_1", "react", new Map());
    scope.record(0, "llm", "", "first");
    const first = scope.flush();
    await settle();
    scope.record(1, "llm", "", "second");
    const second = scope.flush();
    releaseNext();
    await expect(first).rejects.toThrow("ProvisionedThroughputExceededException");
    await settle();
    releaseNext();
    await second;
    expect(written).toEqual([["0000#llm"], ["0000#llm", "0001#llm"]]);
  });
});
