import type { EvalSpend } from "../ports/evalSpend.js";
import { keys } from "./keys.js";
import { expiresAt, type Table } from "./table.js";

/** What judging cost a tenant per UTC day: one item per day (an atomic ADD), kept as long as runs are. */
export class EvalSpendStore implements EvalSpend {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  async spent(tenantId: string, day: string): Promise<number> {
    const { Item } = await this.table.getItem({ Key: keys.evalSpend(tenantId, day), ConsistentRead: true });
    return Number(Item?.usd ?? 0);
  }

  async add(tenantId: string, day: string, usd: number): Promise<void> {
    await this.table.updateItem({
      Key: keys.evalSpend(tenantId, day),
      UpdateExpression: "ADD #usd :usd SET #ttl = :ttl",
      ExpressionAttributeNames: { "#usd": "usd", "#ttl": "ttl" },
      ExpressionAttributeValues: { ":usd": usd, ":ttl": expiresAt(this.retentionDays) },
    });
  }
}
