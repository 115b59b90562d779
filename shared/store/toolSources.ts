import { DeleteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { readVersioned } from "../contracts/schemaVersion.js";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { ToolSourceRecord } from "../contracts/toolSources.js";
import { expiresAt, itemData, type Table } from "./table.js";

const sourceKey = (tenantId: string, name: string) => ({ pk: `TENANT#${tenantId}`, sk: `TOOLSRC#${name}` });
const SOURCE_PREFIX = "TOOLSRC#";
/** Marks that a run was told a source was down, so it is told once however many agents notice. */
const unavailableKey = (runId: string, source: string) => ({ pk: `RUN#${runId}`, sk: `SRCDOWN#${source}` });

/** A tenant's MCP tool sources (`TENANT#t` / `TOOLSRC#name`). Header values are stored sealed. */
export class ToolSourceStore {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  /** Creates the source; false when the tenant has one of that name already. */
  async create(source: ToolSourceRecord): Promise<boolean> {
    try {
      await this.table.doc.send(
        new PutCommand({
          TableName: this.table.name,
          Item: { ...sourceKey(source.tenantId, source.name), ...ToolSourceRecord.parse(source) },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async get(tenantId: string, name: string): Promise<ToolSourceRecord | undefined> {
    const { Item } = await this.table.doc.send(new GetCommand({ TableName: this.table.name, Key: sourceKey(tenantId, name), ConsistentRead: true }));
    return Item ? toolSourceOf(Item) : undefined;
  }

  /** In name order. */
  async list(tenantId: string): Promise<ToolSourceRecord[]> {
    const items = await this.table.queryPrefix<Record<string, unknown>>(`TENANT#${tenantId}`, SOURCE_PREFIX);
    return items.map(toolSourceOf);
  }

  /** False when there was none. */
  async delete(tenantId: string, name: string): Promise<boolean> {
    const { Attributes } = await this.table.doc.send(new DeleteCommand({ TableName: this.table.name, Key: sourceKey(tenantId, name), ReturnValues: "ALL_OLD" }));
    return Attributes !== undefined;
  }

  /** True the first time for this run and source (the caller then tells the run). */
  async markUnavailableOnce(runId: string, source: string): Promise<boolean> {
    try {
      await this.table.doc.send(
        new PutCommand({
          TableName: this.table.name,
          Item: { ...unavailableKey(runId, source), ttl: expiresAt(this.retentionDays) },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}

function toolSourceOf(item: Record<string, unknown>): ToolSourceRecord {
  return readVersioned(ToolSourceRecord, `tool source ${String(item.name)}`, itemData(item));
}
