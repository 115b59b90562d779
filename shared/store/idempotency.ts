import { createHash } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { IdempotencyClaim, IdempotencyKeys } from "../ports/idempotency.js";
import type { Table } from "./table.js";

/** The key's hash, not the key: a client's key can be long and holds whatever the client put in it. */
const itemKey = (tenantId: string, key: string) => ({ pk: `TENANT#${tenantId}`, sk: `IDEM#${createHash("sha256").update(key).digest("hex")}` });

/** Idempotency-Key claims in the table (`TENANT#id` / `IDEM#<sha256>`), expiring by TTL. */
export class IdempotencyStore implements IdempotencyKeys {
  constructor(private readonly table: Table) {}

  async claim(tenantId: string, key: string, claim: { runId: string; bodyHash: string; inProgressSeconds: number; ttlSeconds: number }): Promise<IdempotencyClaim> {
    const now = Math.floor(Date.now() / 1000);
    try {
      await this.table.doc.send(
        new PutCommand({
          TableName: this.table.name,
          Item: { ...itemKey(tenantId, key), runId: claim.runId, bodyHash: claim.bodyHash, ttl: now + claim.ttlSeconds, inProgressUntil: now + claim.inProgressSeconds },
          ConditionExpression: "attribute_not_exists(pk) OR inProgressUntil < :now",
          ExpressionAttributeValues: { ":now": now },
        }),
      );
      return { claimed: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    const { Item } = await this.table.doc.send(new GetCommand({ TableName: this.table.name, Key: itemKey(tenantId, key), ConsistentRead: true }));
    return { claimed: false, runId: Item?.runId as string | undefined, bodyHash: Item?.bodyHash as string | undefined };
  }

  async complete(tenantId: string, key: string): Promise<void> {
    await this.table.doc.send(new UpdateCommand({ TableName: this.table.name, Key: itemKey(tenantId, key), UpdateExpression: "REMOVE inProgressUntil" }));
  }

  async release(tenantId: string, key: string, runId: string): Promise<void> {
    try {
      await this.table.doc.send(
        new DeleteCommand({ TableName: this.table.name, Key: itemKey(tenantId, key), ConditionExpression: "runId = :runId", ExpressionAttributeValues: { ":runId": runId } }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}
