import { describe, expect, it } from "vitest";
import type { SandboxLeases } from "../../../../shared/ports/sandboxLeases.js";
import { SandboxLeaseStore } from "../../../../shared/store/sandboxLeases.js";
import { MemorySandboxLeases } from "../../../../shared/testing/memorySandboxLeases.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The sandbox leases port's contract: fake and DynamoDB adapter alike, on a clock the test moves. */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (clock: () => number): SandboxLeases => new MemorySandboxLeases(clock) },
  { name: "DynamoDB adapter on dynalite", make: (clock: () => number): SandboxLeases => new SandboxLeaseStore(dynamo.table(), clock) },
])("sandbox leases port: $name", ({ make }) => {
  const setup = () => {
    const time = { now: 1_000_000 };
    return { leases: make(() => time.now), time, tenant: freshId("tenant"), other: freshId("tenant") };
  };

  it("gives out up to the limit, then none; other tenants have slots of their own", async () => {
    const { leases, tenant, other } = setup();
    const first = await leases.acquire(tenant, "call-a", 2, 60_000);
    const second = await leases.acquire(tenant, "call-b", 2, 60_000);
    expect([first?.slot, second?.slot].sort()).toEqual([0, 1]);
    expect(await leases.acquire(tenant, "call-c", 2, 60_000)).toBeUndefined();
    expect(await leases.held(tenant)).toBe(2);
    expect(await leases.acquire(other, "call-d", 2, 60_000)).toMatchObject({ tenantId: other, holder: "call-d" });
    expect(await leases.held(other)).toBe(1);
  });

  it("a slot given back is taken by the next caller; giving back twice frees nothing more", async () => {
    const { leases, tenant } = setup();
    const first = (await leases.acquire(tenant, "call-a", 1, 60_000))!;
    expect(await leases.acquire(tenant, "call-b", 1, 60_000)).toBeUndefined();
    await leases.release(first);
    const next = await leases.acquire(tenant, "call-b", 1, 60_000);
    expect(next).toEqual({ tenantId: tenant, slot: 0, holder: "call-b" });
    await leases.release(first);
    expect(await leases.held(tenant)).toBe(1);
    expect(await leases.acquire(tenant, "call-c", 1, 60_000)).toBeUndefined();
  });

  it("a lease its holder never gave back (it crashed) frees its slot when it expires, and the late release takes nothing from the new holder", async () => {
    const { leases, time, tenant } = setup();
    const crashed = (await leases.acquire(tenant, "call-a", 1, 60_000))!;
    time.now += 59_999;
    expect(await leases.acquire(tenant, "call-b", 1, 60_000)).toBeUndefined();
    time.now += 1;
    expect(await leases.held(tenant)).toBe(0);
    const next = await leases.acquire(tenant, "call-b", 1, 60_000);
    expect(next?.holder).toBe("call-b");
    await leases.release(crashed);
    expect(await leases.held(tenant)).toBe(1);
    expect(await leases.acquire(tenant, "call-c", 1, 60_000)).toBeUndefined();
  });

  it("a retried call takes its own slot again rather than wait for its dead first attempt", async () => {
    const { leases, tenant } = setup();
    await leases.acquire(tenant, "call-a", 1, 60_000);
    expect(await leases.acquire(tenant, "call-a", 1, 60_000)).toEqual({ tenantId: tenant, slot: 0, holder: "call-a" });
    expect(await leases.held(tenant)).toBe(1);
  });

  it("of many callers at once, exactly the limit get a slot", async () => {
    const { leases, tenant } = setup();
    const taken = await Promise.all(Array.from({ length: 8 }, (_, i) => leases.acquire(tenant, `call-${i}`, 3, 60_000)));
    const slots = taken.flatMap((lease) => (lease ? [lease.slot] : []));
    expect(slots.sort()).toEqual([0, 1, 2]);
    expect(await leases.held(tenant)).toBe(3);
  });
});
