import { describe, expect, it } from "vitest";
import type { ActiveRuns } from "../../../../shared/ports/activeRuns.js";
import { ActiveRunStore } from "../../../../shared/store/activeRuns.js";
import { MemoryActiveRuns } from "../../../../shared/testing/memoryActiveRuns.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The active runs port's contract: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (): ActiveRuns => new MemoryActiveRuns() },
  { name: "DynamoDB adapter on dynalite", make: (): ActiveRuns => new ActiveRunStore(dynamo.table()) },
])("active runs port: $name", ({ make }) => {
  it("requests racing for the last slots take no more than the limit; a release frees one", async () => {
    const slots = make();
    const tenant = freshId("tenant");
    const taken = await Promise.all(Array.from({ length: 5 }, () => slots.acquire(tenant, 3)));
    expect(taken.filter(Boolean)).toHaveLength(3);
    expect(await slots.count(tenant)).toBe(3);
    await slots.release(tenant);
    expect(await slots.acquire(tenant, 3)).toBe(true);
    expect(await slots.acquire(tenant, 3)).toBe(false);
  });

  it("a release with no slot taken leaves the count at zero", async () => {
    const slots = make();
    const tenant = freshId("tenant");
    await slots.release(tenant);
    await slots.release(tenant);
    expect(await slots.count(tenant)).toBe(0);
    expect(await slots.acquire(tenant, 1)).toBe(true);
    expect(await slots.count(tenant)).toBe(1);
  });
});
