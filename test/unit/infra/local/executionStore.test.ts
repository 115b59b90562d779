import { appendFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ExecutionStore } from "../../../../infra/local/executionStore.js";
import { useTempDirs } from "../../../support/tempDirs.js";

const tempDir = useTempDirs();

describe("the local Step Functions endpoint's execution store", () => {
  const record = {
    executionArn: "arn:x:run_1",
    stateMachineArn: "arn:sm",
    name: "run_1",
    input: "{}",
    status: "RUNNING" as const,
    startDate: 1,
    redriveCount: 0,
  };

  it("keeps executions and their history across instances (a restart)", () => {
    const dir = tempDir();
    const store = new ExecutionStore(dir);
    store.save({ ...record, resumeFrom: { state: "Plan", input: { runId: "run_1" } } });
    store.appendHistory("run_1", { id: 1, type: "ExecutionStarted" });
    store.appendHistory("run_1", { id: 2, type: "TaskStateEntered" });
    const reopened = new ExecutionStore(dir);
    expect(reopened.all()).toEqual([{ ...record, resumeFrom: { state: "Plan", input: { runId: "run_1" } } }]);
    expect(reopened.history("run_1").map((e) => e.id)).toEqual([1, 2]);
  });

  it("reads a history whose last line a crash cut short", () => {
    const dir = tempDir();
    const store = new ExecutionStore(dir);
    store.appendHistory("run_1", { id: 1, type: "ExecutionStarted" });
    appendFileSync(path.join(dir, "run_1.history.jsonl"), '{"id":2,"ty');
    expect(store.history("run_1").map((e) => e.id)).toEqual([1]);
  });

  it("keeps nothing without a folder", () => {
    const store = new ExecutionStore();
    store.save(record);
    expect(store.all()).toEqual([]);
    expect(store.persistent).toBe(false);
  });
});
