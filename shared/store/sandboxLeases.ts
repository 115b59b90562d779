import { DeleteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { SandboxLease, SandboxLeases } from "../ports/sandboxLeases.js";
import { keys } from "./keys.js";
import { ifConditionHolds, type Table } from "./table.js";

/**
 * The code sandboxes a tenant has running at once: one item per slot beside the tenant's settings,
 * each taken with a conditional put that holds only while the slot is free, expired or the taker's
 * own, and given back with a delete that holds only while the lease is still the giver's. Every
 * container sees the same slots; a lease whose holder crashed frees itself at `expiresAtMs`.
 */
export class SandboxLeaseStore implements SandboxLeases {
  constructor(
    private readonly table: Table,
    private readonly clock: () => number = Date.now,
  ) {}

  async acquire(tenantId: string, holder: string, limit: number, ttlMs: number): Promise<SandboxLease | undefined> {
    const now = this.clock();
    const expiresAtMs = now + ttlMs;
    for (let slot = 0; slot < limit; slot++) {
      const taken = await ifConditionHolds(
        this.table.doc.send(
          new PutCommand({
            TableName: this.table.name,
            // The table's TTL removes a lease nobody gave back, long after `expiresAtMs` has freed it.
            Item: { ...keys.sandboxLease(tenantId, slot), holder, expiresAtMs, ttl: Math.ceil(expiresAtMs / 1000) + 3600 },
            ConditionExpression: "attribute_not_exists(pk) OR expiresAtMs <= :now OR holder = :holder",
            ExpressionAttributeValues: { ":now": now, ":holder": holder },
          }),
        ),
      );
      if (taken) return { tenantId, slot, holder };
    }
    return undefined;
  }

  async release({ tenantId, slot, holder }: SandboxLease): Promise<void> {
    await ifConditionHolds(
      this.table.doc.send(
        new DeleteCommand({
          TableName: this.table.name,
          Key: keys.sandboxLease(tenantId, slot),
          ConditionExpression: "holder = :holder",
          ExpressionAttributeValues: { ":holder": holder },
        }),
      ),
    );
  }

  async held(tenantId: string): Promise<number> {
    const now = this.clock();
    const leases = await this.table.queryPrefix<{ expiresAtMs: number }>(keys.tenantPk(tenantId), keys.sandboxLeasePrefix, {
      attributes: ["expiresAtMs"],
    });
    return leases.filter((lease) => Number(lease.expiresAtMs) > now).length;
  }
}
