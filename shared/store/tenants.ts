import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { TenantSlots } from "../ports/slots.js";
import type { Table } from "./table.js";

const activeKey = (tenantId: string) => ({ pk: `TENANT#${tenantId}`, sk: "ACTIVE_RUNS" });

/**
 * How many runs a tenant has going: the Gaoding seed's semaphore, kept at the API. A slot is taken
 * at submit (conditionally, so two requests cannot both take the last one) and given back exactly
 * once, when the run reaches a terminal status.
 */
export class ActiveRuns implements TenantSlots {
  constructor(private readonly table: Table) {}

  async acquire(tenantId: string, limit: number): Promise<boolean> {
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: activeKey(tenantId),
          UpdateExpression: "ADD #count :one",
          ConditionExpression: "attribute_not_exists(#count) OR #count < :limit",
          ExpressionAttributeNames: { "#count": "count" },
          ExpressionAttributeValues: { ":one": 1, ":limit": limit },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async count(tenantId: string): Promise<number> {
    const { Item } = await this.table.doc.send(new GetCommand({ TableName: this.table.name, Key: activeKey(tenantId), ConsistentRead: true }));
    return Number(Item?.count ?? 0);
  }

  async release(tenantId: string): Promise<void> {
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: activeKey(tenantId),
          UpdateExpression: "ADD #count :minus",
          ConditionExpression: "#count > :zero",
          ExpressionAttributeNames: { "#count": "count" },
          ExpressionAttributeValues: { ":minus": -1, ":zero": 0 },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}
