import { describe, expect, it } from "vitest";
import type { IdempotencyKeys } from "../../../shared/ports/idempotency.js";
import type { TenantSlots } from "../../../shared/ports/slots.js";
import { IdempotencyStore } from "../../../shared/store/idempotency.js";
import { ActiveRuns } from "../../../shared/store/tenants.js";
import { MemoryIdempotency } from "../../../shared/testing/memoryIdempotency.js";
import { MemorySlots } from "../../../shared/testing/memorySlots.js";
import { freshId, useDynalite } from "../../support/dynalite.js";

/** The contracts of the tenant slots and idempotency keys ports: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (): TenantSlots => new MemorySlots() },
  { name: "DynamoDB adapter on dynalite", make: (): TenantSlots => new ActiveRuns(dynamo.table()) },
])("tenant slots port: $name", ({ make }) => {
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

describe.each([
  { name: "in memory", make: (): IdempotencyKeys => new MemoryIdempotency() },
  { name: "DynamoDB adapter on dynalite", make: (): IdempotencyKeys => new IdempotencyStore(dynamo.table()) },
])("idempotency keys port: $name", ({ make }) => {
  const claim = (runId: string, inProgressSeconds = 60) => ({ runId, bodyHash: "hash_a", inProgressSeconds, ttlSeconds: 86_400 });

  it("a key is claimed once; a second claim learns whose it is", async () => {
    const keys = make();
    const tenant = freshId("tenant");
    expect(await keys.claim(tenant, "key-1", claim("run_1"))).toEqual({ claimed: true });
    await keys.complete(tenant, "key-1");
    expect(await keys.claim(tenant, "key-1", claim("run_2"))).toEqual({ claimed: false, runId: "run_1", bodyHash: "hash_a" });
    expect(await keys.claim(freshId("tenant"), "key-1", claim("run_3"))).toEqual({ claimed: true });
  });

  it("only its own run gives a key back; then it can be claimed again", async () => {
    const keys = make();
    const tenant = freshId("tenant");
    await keys.claim(tenant, "key-1", claim("run_1"));
    await keys.release(tenant, "key-1", "run_other");
    expect((await keys.claim(tenant, "key-1", claim("run_2"))).claimed).toBe(false);
    await keys.release(tenant, "key-1", "run_1");
    expect(await keys.claim(tenant, "key-1", claim("run_2"))).toEqual({ claimed: true });
  });

  it("a claim still in progress past its expiry can be taken over (its request died)", async () => {
    const keys = make();
    const tenant = freshId("tenant");
    await keys.claim(tenant, "key-1", claim("run_1", -5));
    expect(await keys.claim(tenant, "key-1", claim("run_2"))).toEqual({ claimed: true });
  });
});
