import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Spend } from "../contracts/budget.js";
import {
  overLimit,
  SPEND_PERIODS,
  type SpendAccount,
  type SpendLedger,
  type SpendLimits,
  type SpendPeriod,
  type SpendTotals,
} from "../ports/spend.js";
import { keys } from "./keys.js";
import { ifConditionHolds, type Table } from "./table.js";

const FIELDS = { tokens: "t", costMicros: "c" } as const;

/** The month's item and, on it, each period's attribute names: `m_t`, `d28_t`, `r_<runId>_t` (and `_c` for cost). */
function layout({ tenantId, runId, at }: SpendAccount) {
  const iso = at.toISOString();
  const prefix: Record<SpendPeriod, string> = { month: "m", day: `d${iso.slice(8, 10)}`, run: `r_${runId}` };
  return { key: keys.spend(tenantId, iso.slice(0, 7)), prefix };
}

/**
 * The spend ledger on DynamoDB: one item per tenant and month holds the month's, each day's and
 * each run's counters, so a reservation is a single UpdateItem whose ConditionExpression checks
 * every limited counter (a ConditionalCheckFailedException is a refusal, read back to say which).
 */
export class SpendStore implements SpendLedger {
  constructor(private readonly table: Table) {}

  async reserve(account: SpendAccount, amount: Spend, limits: SpendLimits) {
    const { key, prefix } = layout(account);
    const names: Record<string, string> = {};
    const values: Record<string, number> = {};
    const adds: string[] = [];
    const conditions: string[] = [];
    for (const period of SPEND_PERIODS) {
      for (const [field, suffix] of Object.entries(FIELDS) as [keyof Spend, string][]) {
        const name = `#${period}${suffix}`;
        names[name] = `${prefix[period]}_${suffix}`;
        values[`:add${suffix}`] = amount[field];
        adds.push(`${name} :add${suffix}`);
        const limit = limits[period]?.[field];
        if (limit === undefined) continue;
        // Room left for this amount: when there is none even on an empty counter, no write can take it.
        if (amount[field] > limit) return { reserved: false as const, over: period };
        values[`:max${period}${suffix}`] = limit - amount[field];
        conditions.push(`(attribute_not_exists(${name}) OR ${name} <= :max${period}${suffix})`);
      }
    }
    const written = await ifConditionHolds(
      this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: key,
          UpdateExpression: `ADD ${adds.join(", ")}`,
          ...(conditions.length ? { ConditionExpression: conditions.join(" AND ") } : {}),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      ),
    );
    if (written !== undefined) return { reserved: true as const };
    return { reserved: false as const, over: overLimit(await this.totals(account), amount, limits) };
  }

  async adjust(account: SpendAccount, delta: Spend): Promise<void> {
    if (delta.tokens === 0 && delta.costMicros === 0) return;
    const { key, prefix } = layout(account);
    const names: Record<string, string> = {};
    const adds: string[] = [];
    for (const period of SPEND_PERIODS) {
      for (const suffix of Object.values(FIELDS)) {
        names[`#${period}${suffix}`] = `${prefix[period]}_${suffix}`;
        adds.push(`#${period}${suffix} :${suffix}`);
      }
    }
    await this.table.doc.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: key,
        UpdateExpression: `ADD ${adds.join(", ")}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ":t": delta.tokens, ":c": delta.costMicros },
      }),
    );
  }

  async totals(account: SpendAccount): Promise<SpendTotals> {
    const { key, prefix } = layout(account);
    const { Item } = await this.table.doc.send(new GetCommand({ TableName: this.table.name, Key: key, ConsistentRead: true }));
    const read = (period: SpendPeriod): Spend => ({
      tokens: Number(Item?.[`${prefix[period]}_t`] ?? 0),
      costMicros: Number(Item?.[`${prefix[period]}_c`] ?? 0),
    });
    return { run: read("run"), day: read("day"), month: read("month") };
  }
}
