import { describe, expect, it } from "vitest";
import type { StreamLeases } from "../../../../shared/ports/streamLeases.js";
import { StreamLeaseStore } from "../../../../shared/store/streamLeases.js";
import { MemoryStreamLeases } from "../../../../shared/testing/memoryStreamLeases.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The stream leases port's contract: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();
const NOW = 1_000_000;
const lease = (tenantId: string, leaseId: string, expiresAt = NOW + 60_000) => ({ tenantId, leaseId, expiresAt });

describe.each([
  { name: "in memory", make: (): StreamLeases => new MemoryStreamLeases() },
  { name: "DynamoDB adapter on dynalite", make: (): StreamLeases => new StreamLeaseStore(dynamo.table()) },
])("stream leases port: $name", ({ make }) => {
  it("requests racing for the last leases take no more than the limit; a release frees one; other tenants are apart", async () => {
    const leases = make();
    const tenant = freshId("tenant");
    const taken = await Promise.all(Array.from({ length: 5 }, (_, i) => leases.acquire(lease(tenant, `l${i}`), 3, NOW)));
    expect(taken.filter(Boolean)).toHaveLength(3);
    expect(await leases.held(tenant, NOW)).toBe(3);
    expect(await leases.acquire(lease(freshId("other"), "o1"), 3, NOW)).toBe(true);
    const holder = taken.indexOf(true);
    await leases.release(tenant, `l${holder}`);
    expect(await leases.held(tenant, NOW)).toBe(2);
    expect(await leases.acquire(lease(tenant, "again"), 3, NOW)).toBe(true);
    expect(await leases.acquire(lease(tenant, "over"), 3, NOW)).toBe(false);
  });

  it("a lease no one renews stops counting when it expires (a crashed container), and a renewed one keeps counting", async () => {
    const leases = make();
    const tenant = freshId("tenant");
    expect(await leases.acquire(lease(tenant, "crashed", NOW + 1_000), 2, NOW)).toBe(true);
    expect(await leases.acquire(lease(tenant, "alive", NOW + 1_000), 2, NOW)).toBe(true);
    expect(await leases.acquire(lease(tenant, "third", NOW + 1_000), 2, NOW)).toBe(false);
    expect(await leases.renew(lease(tenant, "alive", NOW + 61_000))).toBe(true);
    const later = NOW + 2_000;
    expect(await leases.held(tenant, later)).toBe(1);
    expect(await leases.acquire(lease(tenant, "third", later + 60_000), 2, later)).toBe(true);
    expect(await leases.acquire(lease(tenant, "fourth", later + 60_000), 2, later)).toBe(false);
    // The lapsed lease was cleared when the slot went to another: renewing it now says it is gone.
    expect(await leases.renew(lease(tenant, "crashed", later + 60_000))).toBe(false);
    expect(await leases.held(tenant, later)).toBe(2);
  });

  it("a renewal or release of a lease not held changes nothing", async () => {
    const leases = make();
    const tenant = freshId("tenant");
    expect(await leases.renew(lease(tenant, "never"))).toBe(false);
    await leases.release(tenant, "never");
    expect(await leases.held(tenant, NOW)).toBe(0);
    expect(await leases.acquire(lease(tenant, "one"), 1, NOW)).toBe(true);
    await leases.release(tenant, "one");
    await leases.release(tenant, "one");
    expect(await leases.held(tenant, NOW)).toBe(0);
    expect(await leases.renew(lease(tenant, "one"))).toBe(false);
  });
});
