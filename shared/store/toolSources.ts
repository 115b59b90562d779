import { readVersioned } from "../contracts/schemaVersion.js";
import { ToolSourceRecord } from "../contracts/toolSources.js";
import type { ToolSources } from "../ports/toolSources.js";
import { keys } from "./keys.js";
import { expiresAt, ifConditionHolds, itemData, type Table } from "./table.js";

/** A tenant's MCP tool sources (`TENANT#t` / `TOOLSRC#name`). Header values are stored sealed. */
export class ToolSourceStore implements ToolSources {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  /** Creates the source; false when the tenant has one of that name already. */
  async create(source: ToolSourceRecord): Promise<boolean> {
    const written = await ifConditionHolds(
      this.table.putItem({
        Item: { ...keys.toolSource(source.tenantId, source.name), ...ToolSourceRecord.parse(source) },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
    return written !== undefined;
  }

  async get(tenantId: string, name: string): Promise<ToolSourceRecord | undefined> {
    const { Item } = await this.table.getItem({ Key: keys.toolSource(tenantId, name), ConsistentRead: true });
    return Item ? toolSourceOf(Item) : undefined;
  }

  /** In name order. */
  async list(tenantId: string): Promise<ToolSourceRecord[]> {
    const items = await this.table.queryPrefix<Record<string, unknown>>(keys.tenantPk(tenantId), keys.toolSourcePrefix);
    return items.map(toolSourceOf);
  }

  /** False when there was none. */
  async delete(tenantId: string, name: string): Promise<boolean> {
    const { Attributes } = await this.table.deleteItem({ Key: keys.toolSource(tenantId, name), ReturnValues: "ALL_OLD" });
    return Attributes !== undefined;
  }

  /** True the first time for this run and source (the caller then tells the run): told once however many agents notice. */
  async markUnavailableOnce(runId: string, source: string): Promise<boolean> {
    const written = await ifConditionHolds(
      this.table.putItem({
        Item: { ...keys.sourceUnavailable(runId, source), ttl: expiresAt(this.retentionDays) },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
    return written !== undefined;
  }
}

function toolSourceOf(item: Record<string, unknown>): ToolSourceRecord {
  return readVersioned(ToolSourceRecord, `tool source ${String(item.name)}`, itemData(item));
}
