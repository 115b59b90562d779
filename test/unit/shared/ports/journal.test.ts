import { describe, expect, it } from "vitest";
import { ScopeJournal } from "../../../../shared/agent/scopeJournal.js";
import type { RunJournal } from "../../../../shared/ports/journal.js";
import type { Tasks } from "../../../../shared/ports/tasks.js";
import { Journal } from "../../../../shared/store/journal.js";
import { TaskStore } from "../../../../shared/store/tasks.js";
import { MemoryJournal } from "../../../../shared/testing/memoryJournal.js";
import { MemoryRuns } from "../../../../shared/testing/memoryRuns.js";
import { MemoryTasks } from "../../../../shared/testing/memoryTasks.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

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
  {
    name: "DynamoDB adapter on dynalite",
    make: () => ({ journal: new Journal(dynamo.table(), 1), tasks: new TaskStore(dynamo.table(), 1) }),
  },
])("journal port: $name", ({ make }) => {
  it("a step that runs again replays what was recorded instead of producing it again", async () => {
    const { journal } = make();
    const runId = freshId("run");
    let produced = 0;
    const first = await ScopeJournal.load(journal, runId, "react");
    expect(first.size).toBe(0);
    const answer = { content: "4", toolCalls: [], usage: { promptTokens: 3, completionTokens: 1 } };
    expect(
      await first.once(0, "llm", "", async () => {
        produced++;
        return answer;
      }),
    ).toEqual({ value: answer, replayed: false });

    const again = await ScopeJournal.load(journal, runId, "react");
    expect(
      await again.once(0, "llm", "", async () => {
        produced++;
        return { content: "other" };
      }),
    ).toEqual({ value: answer, replayed: true });
    expect(produced).toBe(1);
    expect(again.usage()).toEqual({ promptTokens: 3, completionTokens: 1, llmCalls: 1, toolCalls: 0 });
  });

  it("a deferred record is written only by the next flush, together with other items", async () => {
    const { journal, tasks } = make();
    const runId = freshId("run");
    const scope = await ScopeJournal.load(journal, runId, "task#0#s1.t1");
    await scope.once(0, "tool", "call_1", async () => ({ ok: true, output: "done" }), { defer: true });
    expect((await ScopeJournal.load(journal, runId, "task#0#s1.t1")).has(0, "tool", "call_1")).toBe(false);
    const task = {
      iteration: 0,
      stepIndex: 0,
      taskId: "s1.t1",
      title: "Add",
      text: "Add 2 and 2",
      status: "succeeded" as const,
      result: "4",
    };
    await scope.flush({ tasks: [task] });
    expect((await ScopeJournal.load(journal, runId, "task#0#s1.t1")).get(0, "tool", "call_1")).toEqual({ ok: true, output: "done" });
    expect(await tasks.get(runId, 0, "s1.t1")).toMatchObject(task);
  });

  it("a scope loads its own records and those of scopes under it, not a sibling's", async () => {
    const { journal } = make();
    const runId = freshId("run");
    for (const scope of ["plan#2", "plan#2#r1", "plan#20", "react", "plan"]) {
      const j = await ScopeJournal.load(journal, runId, scope);
      j.record(0, "memo", "", scope);
      await j.flush();
    }
    const plan = await ScopeJournal.load(journal, runId, "plan#2");
    expect(plan.get(0, "memo")).toBe("plan#2");
    expect(plan.scoped("plan#2#r1").get(0, "memo")).toBe("plan#2#r1");
    expect(plan.size).toBe(2);
    expect((await journal.read(runId, "plan#2")).map((record) => record.value).sort()).toEqual(["plan#2", "plan#2#r1"]);
  });

  it("reads plain records: scope, round, kind, call id and value, as written; a later write of a call replaces it", async () => {
    const { journal } = make();
    const runId = freshId("run");
    // Call ids are the model's: they may hold what a key would use as separators.
    const records = [
      { scope: "task#0#s1.t1", round: 0, kind: "llm" as const, value: { content: "", toolCalls: [{ id: "call#0001#llm" }] } },
      { scope: "task#0#s1.t1", round: 0, kind: "tool" as const, callId: "call#0001#llm", value: { ok: true, output: "first" } },
      { scope: "task#0#s1.t1", round: 12_345, kind: "memo" as const, value: null },
      { scope: "task#0#s1.t1", round: 1, kind: "intent" as const, callId: "c 2", value: { tool: "write_artifact" } },
    ];
    await journal.commit(runId, { records });
    await journal.commit(runId, { records: [{ ...records[1], value: { ok: true, output: "again" } }] });
    const byCall = (a: { round: number; kind: string }, b: { round: number; kind: string }) =>
      a.round - b.round || a.kind.localeCompare(b.kind);
    expect((await journal.read(runId, "task#0#s1.t1")).sort(byCall)).toEqual(
      [records[0], { ...records[1], value: { ok: true, output: "again" } }, records[3], records[2]].sort(byCall),
    );
    expect(await journal.read(runId, "task#0#s1.t10")).toEqual([]);
    expect(await journal.read(freshId("run"), "task#0#s1.t1")).toEqual([]);
    const replay = await ScopeJournal.load(journal, runId, "task#0#s1.t1");
    expect(replay.get(0, "tool", "call#0001#llm")).toEqual({ ok: true, output: "again" });
    expect(replay.usage()).toEqual({ promptTokens: 0, completionTokens: 0, llmCalls: 1, toolCalls: 1 });
  });

  it("a record larger than a table item (a 400 KB model answer) replays whole", async () => {
    const { journal } = make();
    const runId = freshId("run");
    const big = { content: "x".repeat(450_000), toolCalls: [] };
    const scope = await ScopeJournal.load(journal, runId, "react");
    await scope.once(0, "llm", "", async () => big);
    expect((await ScopeJournal.load(journal, runId, "react")).get(0, "llm")).toEqual(big);
  });

  it("task records list in iteration then task-number order (t10 after t9), one iteration or all", async () => {
    const { tasks } = make();
    const runId = freshId("run");
    for (const [iteration, taskId] of [
      [1, "s2.t1"],
      [0, "s1.t10"],
      [0, "s1.t9"],
    ] as const) {
      await tasks.put(runId, { iteration, stepIndex: iteration, taskId, title: taskId, text: taskId, status: "pending" });
    }
    expect((await tasks.list(runId)).map((t) => t.taskId)).toEqual(["s1.t9", "s1.t10", "s2.t1"]);
    expect((await tasks.list(runId, 1)).map((t) => t.taskId)).toEqual(["s2.t1"]);
    expect(await tasks.get(runId, 5, "s6.t1")).toBeUndefined();
  });
  it("reads a whole run back, every scope, with each record's fingerprint and where it was inherited from (a replay's copy)", async () => {
    const { journal } = make();
    const runId = freshId("run");
    const big = "x".repeat(200_000);
    await journal.commit(runId, {
      records: [
        { scope: "plan#0", round: 0, kind: "llm", value: { content: "plan" }, fingerprint: "aaaa.bbbb" },
        { scope: "task#0#s1.t1", round: 1, kind: "tool", callId: "c1", value: { ok: true, output: big }, inherited: "replay" },
        { scope: "summary", round: 0, kind: "llm", value: { content: "done" } },
      ],
    });
    await journal.commit(freshId("run"), { records: [{ scope: "plan#0", round: 0, kind: "llm", value: "another run" }] });
    const all = await journal.readRun(runId);
    expect(all.sort((a, b) => a.scope.localeCompare(b.scope))).toEqual([
      { scope: "plan#0", round: 0, kind: "llm", value: { content: "plan" }, fingerprint: "aaaa.bbbb" },
      { scope: "summary", round: 0, kind: "llm", value: { content: "done" } },
      { scope: "task#0#s1.t1", round: 1, kind: "tool", callId: "c1", value: { ok: true, output: big }, inherited: "replay" },
    ]);
  });
});
