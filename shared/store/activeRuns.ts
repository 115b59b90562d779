import type { ActiveRuns } from "../ports/activeRuns.js";
import { keys } from "./keys.js";
import { ifConditionHolds, type Table } from "./table.js";

/**
 * How many runs a tenant has going: the Gaoding seed's semaphore, kept at the API. A slot is taken
 * at submit (conditionally, so two requests cannot both take the last one) and given back exactly
 * once, when the run reaches a terminal status.
 */
export class ActiveRunStore implements ActiveRuns {
  constructor(private readonly table: Table) {}

  async acquire(tenantId: string, limit: number): Promise<boolean> {
    const written = await ifConditionHolds(
      this.table.updateItem({
        Key: keys.activeRuns(tenantId),
        UpdateExpression: "ADD #count :one",
        ConditionExpression: "attribute_not_exists(#count) OR #count < :limit",
        ExpressionAttributeNames: { "#count": "count" },
        ExpressionAttributeValues: { ":one": 1, ":limit": limit },
      }),
    );
    return written !== undefined;
  }

  async count(tenantId: string): Promise<number> {
    const { Item } = await this.table.getItem({ Key: keys.activeRuns(tenantId), ConsistentRead: true });
    return Number(Item?.count ?? 0);
  }

  async release(tenantId: string): Promise<void> {
    await ifConditionHolds(
      this.table.updateItem({
        Key: keys.activeRuns(tenantId),
        UpdateExpression: "ADD #count :minus",
        ConditionExpression: "#count > :zero",
        ExpressionAttributeNames: { "#count": "count" },
        ExpressionAttributeValues: { ":minus": -1, ":zero": 0 },
      }),
    );
  }
}
