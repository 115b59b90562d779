import { describe, expect, it } from "vitest";
import type { Runs } from "../../../../shared/ports/runs.js";
import { RunStore } from "../../../../shared/store/runs.js";
import { MemoryRuns } from "../../../../shared/testing/memoryRuns.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";
import { runRecord } from "../../../support/records.js";

/** The runs port's contract: the same cases for the in-memory fake and the DynamoDB adapter. */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (): Runs => new MemoryRuns() },
  { name: "DynamoDB adapter on dynalite", make: (): Runs => new RunStore(dynamo.table(), 1) },
])("runs port: $name", ({ make }) => {
  it("a run is created once; a second create with its id changes nothing", async () => {
    const runs = make();
    const runId = freshId("run");
    expect(await runs.create(runRecord(runId))).toBe(true);
    expect(await runs.create(runRecord(runId, { input: "other" }))).toBe(false);
    expect(await runs.get(runId)).toMatchObject({ runId, input: "What is 2+2?", status: "queued" });
    expect(await runs.get(freshId("run"))).toBeUndefined();
  });

  it("forks made at once are all counted on their parent; a run that is not there counts none", async () => {
    const runs = make();
    const runId = freshId("run");
    await runs.create(runRecord(runId, { status: "succeeded" }));
    expect((await runs.get(runId))?.forkCount).toBeUndefined();
    expect(await Promise.all(Array.from({ length: 5 }, () => runs.countFork(runId)))).toEqual([true, true, true, true, true]);
    expect((await runs.get(runId))?.forkCount).toBe(5);
    // A later update of other fields keeps the count.
    await runs.update(runId, { result: "4" });
    expect((await runs.get(runId))?.forkCount).toBe(5);
    const missing = freshId("run");
    expect(await runs.countFork(missing)).toBe(false);
    expect(await runs.get(missing)).toBeUndefined();
  });

  it("queued → running happens once: a repeated start gets nothing", async () => {
    const runs = make();
    const runId = freshId("run");
    await runs.create(runRecord(runId));
    expect(await runs.startIfQueued(runId)).toMatchObject({ runId, status: "running" });
    expect(await runs.startIfQueued(runId)).toBeUndefined();
    expect(await runs.status(runId)).toBe("running");
  });

  it("an update conditional on the status applies only in those statuses; usage adds up", async () => {
    const runs = make();
    const runId = freshId("run");
    await runs.create(runRecord(runId, { status: "running" }));
    expect(await runs.update(runId, { result: "4" }, ["running"], { llmCalls: 1, promptTokens: 10 })).toBe(true);
    expect(await runs.update(runId, { result: "5" }, ["queued"])).toBe(false);
    await runs.addUsage(runId, { llmCalls: 2, toolCalls: 1 });
    expect(await runs.get(runId)).toMatchObject({
      result: "4",
      usage: { llmCalls: 3, promptTokens: 10, toolCalls: 1, completionTokens: 0 },
    });
    expect(await runs.update(freshId("run"), { result: "x" })).toBe(false);
  });

  it("a run ends once, and only from the statuses given; a failed run reopens running", async () => {
    const runs = make();
    const runId = freshId("run");
    await runs.create(runRecord(runId, { status: "running" }));
    const ended = await runs.end(
      runId,
      { status: "failed", error: { code: "boom", message: "it broke" }, endedAt: new Date().toISOString() },
      ["queued", "running", "awaiting_input"],
    );
    expect(ended).toMatchObject({ status: "failed", error: { code: "boom" } });
    expect(await runs.end(runId, { status: "succeeded" }, ["queued", "running", "awaiting_input"])).toBeUndefined();
    expect(await runs.reopen(runId, ["succeeded"])).toBe(false);
    expect(await runs.reopen(runId, ["failed"])).toBe(true);
    const reopened = await runs.get(runId);
    expect(reopened?.status).toBe("running");
    expect(reopened?.error).toBeUndefined();
    expect(reopened?.endedAt).toBeUndefined();
  });
});
