import type { IdempotencyClaim, IdempotencyKeys } from "../ports/idempotency.js";
import { keys } from "./keys.js";
import { ifConditionHolds, type Table } from "./table.js";

/** Idempotency-Key claims in the table (`TENANT#id` / `IDEM#<sha256>`), expiring by TTL. */
export class IdempotencyStore implements IdempotencyKeys {
  constructor(private readonly table: Table) {}

  async claim(
    tenantId: string,
    key: string,
    claim: { runId: string; bodyHash: string; inProgressSeconds: number; ttlSeconds: number },
  ): Promise<IdempotencyClaim> {
    const now = Math.floor(Date.now() / 1000);
    const written = await ifConditionHolds(
      this.table.putItem({
        Item: {
          ...keys.idempotencyClaim(tenantId, key),
          runId: claim.runId,
          bodyHash: claim.bodyHash,
          ttl: now + claim.ttlSeconds,
          inProgressUntil: now + claim.inProgressSeconds,
        },
        ConditionExpression: "attribute_not_exists(pk) OR inProgressUntil < :now",
        ExpressionAttributeValues: { ":now": now },
      }),
    );
    if (written) return { claimed: true };
    const { Item } = await this.table.getItem({ Key: keys.idempotencyClaim(tenantId, key), ConsistentRead: true });
    return { claimed: false, runId: Item?.runId as string | undefined, bodyHash: Item?.bodyHash as string | undefined };
  }

  async complete(tenantId: string, key: string): Promise<void> {
    await this.table.updateItem({ Key: keys.idempotencyClaim(tenantId, key), UpdateExpression: "REMOVE inProgressUntil" });
  }

  async release(tenantId: string, key: string, runId: string): Promise<void> {
    await ifConditionHolds(
      this.table.deleteItem({
        Key: keys.idempotencyClaim(tenantId, key),
        ConditionExpression: "runId = :runId",
        ExpressionAttributeValues: { ":runId": runId },
      }),
    );
  }
}
