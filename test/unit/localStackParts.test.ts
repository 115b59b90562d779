import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validatePathParams } from "../../functions/api/params.js";
import { ExecutionStore } from "../../infra/local/executionStore.js";
import { localApiKey } from "../../infra/local/localApiKey.js";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "stepwise-unit-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the local API key", () => {
  it("is one key per data folder: made at the first start, the same at the next", () => {
    const dir = tempDir();
    const first = localApiKey(undefined, dir);
    const second = localApiKey(undefined, dir);
    expect(first).toMatchObject({ source: "new", key: expect.stringMatching(/^sk_local_[0-9a-f]{32}$/) });
    expect(second).toEqual({ key: first.key, source: "kept" });
    expect(localApiKey(undefined, tempDir()).key).not.toBe(first.key);
  });

  it("is STEPWISE_API_KEY when given, and a fresh one in memory", () => {
    expect(localApiKey("sk_mine", tempDir())).toEqual({ key: "sk_mine", source: "given" });
    expect(localApiKey(undefined, undefined).key).not.toBe(localApiKey(undefined, undefined).key);
  });
});

describe("path parameters", () => {
  it("are validated by name before any handler sees them", () => {
    expect(validatePathParams({ runId: "run_abc-1", interruptId: "int_0123" })).toEqual({ runId: "run_abc-1", interruptId: "int_0123" });
    for (const [name, value] of [
      ["interruptId", "i".repeat(1_100)],
      ["deliveryId", "d".repeat(81)],
      ["runId", "run%2Fx"],
      ["sessionId", "s".repeat(65)],
    ]) {
      expect(() => validatePathParams({ [name!]: value }), name).toThrow(
        expect.objectContaining({ statusCode: 400, message: expect.stringContaining(`path.${name}`) }),
      );
    }
  });

  it("a name no route has listed yet still gets a bound (routes added later are covered)", () => {
    expect(validatePathParams({ fileName: "report%20v2.md" })).toEqual({ fileName: "report%20v2.md" });
    expect(() => validatePathParams({ fileName: "f".repeat(257) })).toThrow(expect.objectContaining({ statusCode: 400 }));
  });
});

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
