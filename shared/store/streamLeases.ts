import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { StreamLease, StreamLeases } from "../ports/streamLeases.js";
import { keys } from "./keys.js";
import { ifConditionHolds, type Table } from "./table.js";

/** Attempts at taking a lease while other writers change the same item. */
const ATTEMPTS = 8;

/**
 * A tenant's open streams as one item: `leases`, a map of lease id to expiry (epoch ms), and a
 * `version` every write raises. Taking a lease reads the item, leaves out the lapsed leases and
 * writes the rest with the new one only if the version is still the one read (optimistic
 * concurrency: two requests cannot both take the last lease, nor undo a renewal or a release made
 * in between). Renewing and releasing touch one lease and raise the version.
 */
export class StreamLeaseStore implements StreamLeases {
  constructor(private readonly table: Table) {}

  async acquire(lease: StreamLease, limit: number, now: number): Promise<boolean> {
    const key = keys.streamLeases(lease.tenantId);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const { leases, version } = await this.read(lease.tenantId);
      const live = Object.entries(leases).filter(([, expiresAt]) => expiresAt > now);
      if (live.length >= limit) return false;
      const written = await ifConditionHolds(
        this.table.doc.send(
          new UpdateCommand({
            TableName: this.table.name,
            Key: key,
            UpdateExpression: "SET #leases = :leases, #version = :next",
            ConditionExpression: version === undefined ? "attribute_not_exists(#version)" : "#version = :read",
            ExpressionAttributeNames: { "#leases": "leases", "#version": "version" },
            ExpressionAttributeValues: {
              ":leases": { ...Object.fromEntries(live), [lease.leaseId]: lease.expiresAt },
              ":next": (version ?? 0) + 1,
              ...(version === undefined ? {} : { ":read": version }),
            },
          }),
        ),
      );
      if (written) return true;
      // Another writer came in between: read again, after a short random pause so racers spread out.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * (attempt + 1)));
    }
    return false;
  }

  async renew(lease: StreamLease): Promise<boolean> {
    const written = await ifConditionHolds(
      this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.streamLeases(lease.tenantId),
          UpdateExpression: "SET #leases.#id = :expiresAt ADD #version :one",
          ConditionExpression: "attribute_exists(#leases.#id)",
          ExpressionAttributeNames: { "#leases": "leases", "#id": lease.leaseId, "#version": "version" },
          ExpressionAttributeValues: { ":expiresAt": lease.expiresAt, ":one": 1 },
        }),
      ),
    );
    return written !== undefined;
  }

  async release(tenantId: string, leaseId: string): Promise<void> {
    await ifConditionHolds(
      this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.streamLeases(tenantId),
          UpdateExpression: "REMOVE #leases.#id ADD #version :one",
          ConditionExpression: "attribute_exists(#leases.#id)",
          ExpressionAttributeNames: { "#leases": "leases", "#id": leaseId, "#version": "version" },
          ExpressionAttributeValues: { ":one": 1 },
        }),
      ),
    );
  }

  async held(tenantId: string, now: number): Promise<number> {
    const { leases } = await this.read(tenantId);
    return Object.values(leases).filter((expiresAt) => expiresAt > now).length;
  }

  private async read(tenantId: string): Promise<{ leases: Record<string, number>; version: number | undefined }> {
    const { Item } = await this.table.doc.send(
      new GetCommand({ TableName: this.table.name, Key: keys.streamLeases(tenantId), ConsistentRead: true }),
    );
    return { leases: (Item?.leases as Record<string, number> | undefined) ?? {}, version: Item?.version as number | undefined };
  }
}
