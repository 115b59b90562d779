import { describe, expect, it } from "vitest";
import type { Interrupts } from "../../../../shared/ports/interrupts.js";
import { InterruptStore } from "../../../../shared/store/interrupts.js";
import { MemoryInterrupts } from "../../../../shared/testing/memoryInterrupts.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";
import { pendingInterrupt } from "../../../support/records.js";

/** The interrupts port's contract: the same cases for the in-memory fake and the DynamoDB adapter. */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (): Interrupts => new MemoryInterrupts() },
  { name: "DynamoDB adapter on dynalite", make: (): Interrupts => new InterruptStore(dynamo.table(), 1) },
])("interrupts port: $name", ({ make }) => {
  it("an interrupt opens once: a retried step finds the one it opened", async () => {
    const interrupts = make();
    const runId = freshId("run");
    expect((await interrupts.open(pendingInterrupt(runId, "int_1"))).created).toBe(true);
    const again = await interrupts.open(pendingInterrupt(runId, "int_1", { summary: "something else" }));
    expect(again).toMatchObject({ created: false, interrupt: { interruptId: "int_1", summary: "Run write_artifact" } });
    expect((await interrupts.list(runId)).map((i) => i.interruptId)).toEqual(["int_1"]);
  });

  it("it is resolved once; a later transition finds it no longer pending", async () => {
    const interrupts = make();
    const runId = freshId("run");
    await interrupts.open(pendingInterrupt(runId, "int_1"));
    const resolution = { decision: "approve" as const, resolvedAt: new Date().toISOString() };
    expect(await interrupts.resolve(runId, "int_1", resolution)).toBe(true);
    expect(await interrupts.resolve(runId, "int_1", { ...resolution, decision: "reject" })).toBe(false);
    expect(await interrupts.transition(runId, "int_1", "cancelled")).toBe(false);
    expect(await interrupts.get(runId, "int_1")).toMatchObject({ status: "resolved", resolution: { decision: "approve" } });
    expect(await interrupts.resolve(runId, "int_missing", resolution)).toBe(false);
  });

  it("the waiting task's token is kept with it, never in what clients read; there is no token for a missing interrupt", async () => {
    const interrupts = make();
    const runId = freshId("run");
    await interrupts.open(pendingInterrupt(runId, "int_1"));
    expect(await interrupts.attachToken(runId, "int_1", "AQtoken")).toMatchObject({ status: "pending" });
    expect((await interrupts.getWithToken(runId, "int_1"))?.taskToken).toBe("AQtoken");
    expect(await interrupts.get(runId, "int_1")).not.toHaveProperty("taskToken");
    await expect(interrupts.attachToken(runId, "int_missing", "AQtoken")).rejects.toThrow("Interrupt int_missing of run");
  });
});
