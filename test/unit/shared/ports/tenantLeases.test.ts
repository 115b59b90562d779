import { describe, expect, it } from "vitest";
import type { TenantLeases } from "../../../../shared/ports/tenantLeases.js";
import { TenantLeaseStore } from "../../../../shared/store/tenantLeases.js";
import { MemoryTenantLeases } from "../../../../shared/testing/memoryTenantLeases.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The tenant leases port's contract (sandboxes running, open streams): fake and DynamoDB adapter alike, on a clock the test moves. */

const dynamo = useDynalite();
const TTL = 60_000;

describe.each([
  { name: "in memory", make: (clock: () => number): TenantLeases => new MemoryTenantLeases(clock) },
  { name: "DynamoDB adapter on dynalite", make: (clock: () => number): TenantLeases => new TenantLeaseStore(dynamo.table(), clock) },
])("tenant leases port: $name", ({ make }) => {
  const setup = () => {
    const time = { now: 1_000_000 };
    return { leases: make(() => time.now), time, tenant: freshId("tenant"), other: freshId("tenant") };
  };

  it("gives out up to the limit, then none; other tenants, and the other kind, have slots of their own", async () => {
    const { leases, tenant, other } = setup();
    const first = await leases.acquire("sandbox", tenant, 2, "call-a", TTL);
    const second = await leases.acquire("sandbox", tenant, 2, "call-b", TTL);
    expect([first?.slot, second?.slot].sort()).toEqual([0, 1]);
    expect(await leases.acquire("sandbox", tenant, 2, "call-c", TTL)).toBeUndefined();
    expect(await leases.held("sandbox", tenant)).toBe(2);
    expect(await leases.acquire("sandbox", other, 2, "call-d", TTL)).toMatchObject({ kind: "sandbox", tenantId: other, leaseId: "call-d" });
    expect(await leases.held("sandbox", other)).toBe(1);
    expect(await leases.acquire("stream", tenant, 1, "stream-a", TTL)).toMatchObject({ kind: "stream", tenantId: tenant, slot: 0 });
    expect(await leases.acquire("stream", tenant, 1, "stream-b", TTL)).toBeUndefined();
    expect(await leases.held("stream", tenant)).toBe(1);
    expect(await leases.held("sandbox", tenant)).toBe(2);
  });

  it("a slot given back is taken by the next caller; giving back twice, or renewing what was given back, frees and holds nothing", async () => {
    const { leases, tenant } = setup();
    const first = (await leases.acquire("stream", tenant, 1, "call-a", TTL))!;
    expect(await leases.acquire("stream", tenant, 1, "call-b", TTL)).toBeUndefined();
    await leases.release(first);
    expect(await leases.renew(first, TTL)).toBe(false);
    expect(await leases.held("stream", tenant)).toBe(0);
    const next = await leases.acquire("stream", tenant, 1, "call-b", TTL);
    expect(next).toEqual({ kind: "stream", tenantId: tenant, slot: 0, leaseId: "call-b" });
    await leases.release(first);
    expect(await leases.held("stream", tenant)).toBe(1);
    expect(await leases.acquire("stream", tenant, 1, "call-c", TTL)).toBeUndefined();
    expect(await leases.renew({ kind: "stream", tenantId: tenant, slot: 3, leaseId: "never" }, TTL)).toBe(false);
    expect(await leases.held("stream", tenant)).toBe(1);
  });

  it("a lease no one renews frees its slot when it expires (a crashed holder), and its late renewal or release takes nothing from the new holder; a renewed one keeps counting", async () => {
    const { leases, time, tenant } = setup();
    const crashed = (await leases.acquire("stream", tenant, 2, "crashed", TTL))!;
    const alive = (await leases.acquire("stream", tenant, 2, "alive", TTL))!;
    time.now += 40_000;
    expect(await leases.renew(alive, TTL)).toBe(true);
    time.now += 19_999;
    expect(await leases.acquire("stream", tenant, 2, "third", TTL)).toBeUndefined();
    time.now += 1;
    expect(await leases.held("stream", tenant)).toBe(1);
    const third = await leases.acquire("stream", tenant, 2, "third", TTL);
    expect(third).toMatchObject({ leaseId: "third", slot: crashed.slot });
    expect(await leases.renew(crashed, TTL)).toBe(false);
    await leases.release(crashed);
    expect(await leases.held("stream", tenant)).toBe(2);
    expect(await leases.acquire("stream", tenant, 2, "fourth", TTL)).toBeUndefined();
  });

  it("a retried call takes its own slot again rather than wait for its dead first attempt, or take a second", async () => {
    const { leases, tenant } = setup();
    const other = (await leases.acquire("sandbox", tenant, 1, "call-b", TTL))!;
    const first = await leases.acquire("sandbox", tenant, 2, "call-a", TTL);
    expect(first?.slot).toBe(1);
    expect(await leases.acquire("sandbox", tenant, 2, "call-a", TTL)).toEqual(first);
    expect(await leases.held("sandbox", tenant)).toBe(2);
    // With a lower slot free, it still takes its own.
    await leases.release(other);
    expect(await leases.acquire("sandbox", tenant, 2, "call-a", TTL)).toEqual(first);
    expect(await leases.held("sandbox", tenant)).toBe(1);
  });

  it.each([
    [8, 3],
    [24, 20],
  ])("of %i callers at once, exactly the limit (%i) get a slot, each a different one", async (callers, limit) => {
    const { leases, tenant } = setup();
    const taken = await Promise.all(Array.from({ length: callers }, (_, i) => leases.acquire("stream", tenant, limit, `call-${i}`, TTL)));
    const slots = taken.flatMap((lease) => (lease ? [lease.slot] : []));
    expect(slots.sort((a, b) => a - b)).toEqual(Array.from({ length: limit }, (_, slot) => slot));
    expect(await leases.held("stream", tenant)).toBe(limit);
  });

  it("under a lowered limit, the leases taken under the higher one count until they end", async () => {
    const { leases, tenant } = setup();
    const held = await Promise.all(["a", "b", "c"].map((id) => leases.acquire("sandbox", tenant, 3, id, TTL)));
    expect(await leases.acquire("sandbox", tenant, 2, "d", TTL)).toBeUndefined();
    await leases.release(held.find((lease) => lease?.slot === 0)!);
    expect(await leases.acquire("sandbox", tenant, 2, "d", TTL)).toBeUndefined();
    await leases.release(held.find((lease) => lease?.slot === 2)!);
    expect(await leases.acquire("sandbox", tenant, 2, "d", TTL)).toMatchObject({ slot: 0 });
    expect(await leases.held("sandbox", tenant)).toBe(2);
  });
});
