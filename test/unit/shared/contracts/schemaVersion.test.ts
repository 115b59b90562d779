import { describe, expect, it } from "vitest";
import { handler as finalize } from "../../../../functions/steps/finalize.js";
import { SCHEMA_VERSION } from "../../../../shared/contracts/schemaVersion.js";
import { executionInput } from "../../../../shared/contracts/steps.js";
import { InterruptStore } from "../../../../shared/store/interrupts.js";
import { keys } from "../../../../shared/store/keys.js";
import { RunStore } from "../../../../shared/store/runs.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";
import { pendingInterrupt, runRecord } from "../../../support/records.js";

/**
 * Saved state carries a schema version (a run may wait for days across deploys, and the API reads
 * what older code wrote): what this code knows it reads, what a newer version wrote it refuses
 * with an error that names both versions, before reading anything else of it.
 */
const dynamo = useDynalite();
const NEWER = SCHEMA_VERSION + 1;
const bothVersions = new RegExp(`schema version ${NEWER};.*schema versions 1 to ${SCHEMA_VERSION}`);

describe("records in the table", () => {
  it("a run record of this version is read; one a newer version wrote is refused, naming both versions", async () => {
    const runs = new RunStore(dynamo.table(), 1);
    const current = freshId("run");
    await runs.create(runRecord(current));
    expect(await runs.get(current)).toMatchObject({ runId: current, schemaVersion: SCHEMA_VERSION });

    const newer = freshId("run");
    // As a newer deploy would write it: another version, and a field this code has never seen.
    await dynamo.table().putItem({ Item: { ...keys.run(newer), ...runRecord(newer), schemaVersion: NEWER, budgetV2: { tokens: 5 } } });
    await expect(runs.get(newer)).rejects.toThrow(bothVersions);
    await expect(runs.get(newer)).rejects.toMatchObject({ code: "unsupported_schema_version" });
  });

  it("an interrupt a newer version wrote is refused too, in a listing as well", async () => {
    const interrupts = new InterruptStore(dynamo.table(), 1);
    const runId = freshId("run");
    await interrupts.open(pendingInterrupt(runId, "int_1"));
    expect((await interrupts.list(runId)).map((i) => i.interruptId)).toEqual(["int_1"]);
    await dynamo
      .table()
      .putItem({ Item: { ...keys.interrupt(runId, "int_2"), ...pendingInterrupt(runId, "int_2"), schemaVersion: NEWER } });
    await expect(interrupts.list(runId)).rejects.toThrow(bothVersions);
  });
});

describe("the state machine's state", () => {
  it("a run's execution input names the schema version", () => {
    expect(JSON.parse(executionInput("run_1"))).toEqual({ runId: "run_1", schemaVersion: SCHEMA_VERSION });
  });

  it("a step refuses state a newer version wrote, naming both versions, and changes nothing", async () => {
    const error = await finalize({ runId: "run_x", schemaVersion: NEWER } as never, {} as never).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(bothVersions);
    expect((error as Error).message).toContain('The state of "Finalize"');
    // Not a final error: once a deploy that reads it is live, a redrive runs the step again.
    expect((error as Error).name).toBe("Stepwise.Internal");
  });
});
