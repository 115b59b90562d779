import type { LeaseKind, TenantLease, TenantLeases } from "../ports/tenantLeases.js";
import { keys } from "./keys.js";
import { ifConditionHolds, type Table } from "./table.js";

type Slot = { slot: number; leaseId: string; expiresAt: number };

/** The table's TTL removes a lease nobody gave back, an hour after its expiry freed it. */
const ttlOf = (expiresAt: number) => Math.ceil(expiresAt / 1000) + 3600;

/**
 * A tenant's leases of a kind, one item per slot in the tenant's partition, all read with one
 * Query. Taking one is a put on a slot that holds only while the slot is free, expired or the
 * taker's own; renewing and giving back hold only while the slot is still the lease's.
 * One item per slot, not one item holding every lease: writers of different slots never touch the
 * same item, so no write undoes another's and none is refused because others wrote meanwhile (a
 * shared item is read, changed and written back under a version: racers retry, and give up while
 * a slot is free), and since only slots 0 to limit − 1 are taken, no more than `limit` can count.
 */
export class TenantLeaseStore implements TenantLeases {
  constructor(
    private readonly table: Table,
    private readonly clock: () => number = () => Date.now(),
  ) {}

  async acquire(kind: LeaseKind, tenantId: string, limit: number, leaseId: string, ttlMs: number): Promise<TenantLease | undefined> {
    // A round takes nothing only if others took every slot it saw free: then it reads again.
    for (;;) {
      const now = this.clock();
      const live = (await this.slots(kind, tenantId)).filter((lease) => lease.expiresAt > now);
      const own = live.find((lease) => lease.leaseId === leaseId);
      const free = Array.from({ length: limit }, (_, slot) => slot).filter((slot) => !live.some((lease) => lease.slot === slot));
      // Its own slot again; else, while fewer than `limit` count (a lowered limit counts the slots
      // above it), the free ones in random order, so racers seldom try the same one.
      const tries = own ? [own.slot] : live.length < limit ? free.sort(() => Math.random() - 0.5) : [];
      if (tries.length === 0) return undefined;
      for (const slot of tries) {
        const expiresAt = now + ttlMs;
        const taken = await ifConditionHolds(
          this.table.putItem({
            Item: { ...keys.tenantLease(tenantId, kind, slot), slot, leaseId, expiresAt, ttl: ttlOf(expiresAt) },
            ConditionExpression: "attribute_not_exists(pk) OR expiresAt <= :now OR leaseId = :leaseId",
            ExpressionAttributeValues: { ":now": now, ":leaseId": leaseId },
          }),
        );
        if (taken) return { kind, tenantId, slot, leaseId };
      }
    }
  }

  async renew({ kind, tenantId, slot, leaseId }: TenantLease, ttlMs: number): Promise<boolean> {
    const expiresAt = this.clock() + ttlMs;
    const renewed = await ifConditionHolds(
      this.table.updateItem({
        Key: keys.tenantLease(tenantId, kind, slot),
        UpdateExpression: "SET expiresAt = :expiresAt, #ttl = :ttl",
        ConditionExpression: "leaseId = :leaseId",
        ExpressionAttributeNames: { "#ttl": "ttl" },
        ExpressionAttributeValues: { ":expiresAt": expiresAt, ":ttl": ttlOf(expiresAt), ":leaseId": leaseId },
      }),
    );
    return renewed !== undefined;
  }

  async release({ kind, tenantId, slot, leaseId }: TenantLease): Promise<void> {
    await ifConditionHolds(
      this.table.deleteItem({
        Key: keys.tenantLease(tenantId, kind, slot),
        ConditionExpression: "leaseId = :leaseId",
        ExpressionAttributeValues: { ":leaseId": leaseId },
      }),
    );
  }

  async held(kind: LeaseKind, tenantId: string): Promise<number> {
    const now = this.clock();
    return (await this.slots(kind, tenantId)).filter((lease) => lease.expiresAt > now).length;
  }

  /** Every slot of the kind the tenant has an item for (taken, or expired and not yet taken again). */
  private slots(kind: LeaseKind, tenantId: string): Promise<Slot[]> {
    return this.table.queryPrefix<Slot>(keys.tenantPk(tenantId), keys.tenantLeasePrefix(kind), {
      attributes: ["slot", "leaseId", "expiresAt"],
    });
  }
}
