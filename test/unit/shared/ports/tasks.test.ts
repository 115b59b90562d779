import { describe, expect, it } from "vitest";
import { ScopeJournal } from "../../../../shared/agent/scopeJournal.js";
import { Journal } from "../../../../shared/store/journal.js";
import { RunStore } from "../../../../shared/store/runs.js";
import { TaskStore } from "../../../../shared/store/tasks.js";
import { MemoryJournal } from "../../../../shared/testing/memoryJournal.js";
import { MemoryRuns } from "../../../../shared/testing/memoryRuns.js";
import { MemoryTasks } from "../../../../shared/testing/memoryTasks.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The tasks port's contract (its records are written by the journal's commits): fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

describe.each([
  {
    name: "in memory",
    make: () => {
      const runs = new MemoryRuns();
      const tasks = new MemoryTasks(runs);
      return { runs, tasks, journal: new MemoryJournal(tasks) };
    },
  },
  {
    name: "DynamoDB adapter on dynalite",
    make: () => ({
      runs: new RunStore(dynamo.table(), 1),
      tasks: new TaskStore(dynamo.table(), 1),
      journal: new Journal(dynamo.table(), 1),
    }),
  },
])("tasks port: $name", ({ make }) => {
  it("an executor reads its step's context and the run's status in one call", async () => {
    const { runs, tasks, journal } = make();
    const runId = freshId("run");
    await runs.create({
      schemaVersion: 1,
      runId,
      tenantId: "t1",
      sessionId: "s1",
      status: "running",
      requestedMode: "plan_solve",
      input: "x",
      metadata: {},
      usage: { promptTokens: 0, completionTokens: 0, llmCalls: 0, toolCalls: 0 },
      executionArn: "arn",
      createdAt: "2026-01-01T00:00:00Z",
      updatedAt: "2026-01-01T00:00:00Z",
    });
    const step = {
      iteration: 0,
      stepIndex: 0,
      tenantId: "t1",
      request: "x",
      priorResults: [],
      maxRounds: 5,
      tasks: [{ taskId: "s1.t1", title: "a", text: "a" }],
    };
    await (await ScopeJournal.load(journal, runId, "plan#0")).flush({ step });
    expect(await tasks.stepAndRunStatus(runId, 0)).toEqual({ step: expect.objectContaining(step), status: "running" });
    expect(await tasks.stepAndRunStatus(runId, 1)).toEqual({ step: undefined, status: "running" });
  });

  it("task records come by iteration, then by task number (t10 after t9), with the latest record of each", async () => {
    const { tasks } = make();
    const runId = freshId("run");
    const task = (iteration: number, n: number) => ({
      iteration,
      stepIndex: 0,
      taskId: `t${n}`,
      title: `task ${n}`,
      text: `do ${n}`,
      status: "pending" as const,
    });
    for (const [iteration, n] of [
      [1, 1],
      [0, 10],
      [0, 9],
      [0, 1],
    ] as const)
      await tasks.put(runId, task(iteration, n));
    await tasks.put(runId, { ...task(0, 9), status: "succeeded", result: "nine" });
    expect((await tasks.list(runId)).map((t) => `${t.iteration}/${t.taskId}`)).toEqual(["0/t1", "0/t9", "0/t10", "1/t1"]);
    expect((await tasks.list(runId, 1)).map((t) => t.taskId)).toEqual(["t1"]);
    expect(await tasks.get(runId, 0, "t9")).toMatchObject({ status: "succeeded", result: "nine" });
    expect(await tasks.get(runId, 2, "t1")).toBeUndefined();
    expect(await tasks.list(freshId("run"))).toEqual([]);
  });

  it("a commit of the journal writes task records and the step context with its entries", async () => {
    const { tasks, journal } = make();
    const runId = freshId("run");
    const step = {
      iteration: 0,
      stepIndex: 0,
      tenantId: "t1",
      request: "x",
      priorResults: [],
      maxRounds: 5,
      tasks: [{ taskId: "t1", title: "a", text: "a" }],
    };
    const pending = { iteration: 0, stepIndex: 0, taskId: "t1", title: "a", text: "a", status: "pending" as const };
    await journal.commit(runId, {
      records: [{ scope: "plan#0", round: 0, kind: "llm", value: { content: "plan" } }],
      tasks: [pending],
      step,
    });
    expect(await tasks.step(runId, 0)).toMatchObject(step);
    expect(await tasks.list(runId, 0)).toEqual([expect.objectContaining(pending)]);
    expect((await ScopeJournal.load(journal, runId, "plan#0")).get(0, "llm")).toEqual({ content: "plan" });
  });
});
