import type { Spend } from "../contracts/budget.js";
import {
  beyondLimit,
  limitedPeriods,
  type SpendAccount,
  type SpendLedger,
  type SpendLimits,
  type SpendPeriod,
  type SpendTotals,
  tenantPeriod,
} from "../ports/spend.js";
import { keys } from "./keys.js";
import { ifConditionHolds, type Table } from "./table.js";

/** Each counter's item: the run's in the run's partition, the tenant's day and month in the tenant's. */
function keyOf(period: SpendPeriod, { tenantId, runId, at }: SpendAccount) {
  return period === "run" ? keys.runSpend(runId) : keys.tenantSpend(tenantId, tenantPeriod(period, at));
}

/**
 * The spend ledger on DynamoDB: one small item per counter (`t` tokens, `c` micro-USD), so a write
 * costs one write unit however many runs a tenant has. A reservation is one UpdateItem per limited
 * counter whose ConditionExpression keeps it within its limit; a refusal gives back what the
 * earlier counters of the same reservation took.
 */
export class SpendStore implements SpendLedger {
  constructor(private readonly table: Table) {}

  async reserve(account: SpendAccount, amount: Spend, limits: SpendLimits) {
    const periods = limitedPeriods(limits);
    // A call larger than a whole budget: no write could take it.
    const hopeless = periods.find((period) => beyondLimit(amount, limits[period] ?? {}));
    if (hopeless) return { reserved: false as const, over: hopeless };
    const taken: SpendPeriod[] = [];
    for (const period of periods) {
      if (await this.add(account, period, amount, limits[period])) {
        taken.push(period);
        continue;
      }
      await Promise.all(taken.map((done) => this.add(account, done, negate(amount))));
      return { reserved: false as const, over: period };
    }
    return { reserved: true as const };
  }

  async adjust(account: SpendAccount, delta: Spend, limits: SpendLimits): Promise<void> {
    if (delta.tokens === 0 && delta.costMicros === 0) return;
    await Promise.all(limitedPeriods(limits).map((period) => this.add(account, period, delta)));
  }

  async totals(account: SpendAccount): Promise<SpendTotals> {
    const periods = ["run", "day", "month"] as const;
    const wanted = periods.map((period) => keyOf(period, account));
    const items = await this.table.getMany(wanted);
    const read = (period: SpendPeriod): Spend => {
      const item = items[periods.indexOf(period)];
      return { tokens: Number(item?.t ?? 0), costMicros: Number(item?.c ?? 0) };
    };
    return { run: read("run"), day: read("day"), month: read("month") };
  }

  /** Adds to one counter; with a limit, only if it stays within it (whether it was added). */
  private async add(account: SpendAccount, period: SpendPeriod, amount: Spend, limit?: Partial<Spend>): Promise<boolean> {
    const conditions: string[] = [];
    const values: Record<string, number> = { ":t": amount.tokens, ":c": amount.costMicros };
    for (const [field, name] of [
      ["tokens", "t"],
      ["costMicros", "c"],
    ] as const) {
      const max = limit?.[field];
      if (max === undefined) continue;
      values[`:max${name}`] = max - amount[field];
      conditions.push(`(attribute_not_exists(#${name}) OR #${name} <= :max${name})`);
    }
    const written = await ifConditionHolds(
      this.table.updateItem({
        Key: keyOf(period, account),
        UpdateExpression: "ADD #t :t, #c :c",
        ...(conditions.length ? { ConditionExpression: conditions.join(" AND ") } : {}),
        ExpressionAttributeNames: { "#t": "t", "#c": "c" },
        ExpressionAttributeValues: values,
      }),
    );
    return written !== undefined;
  }
}

const negate = (amount: Spend): Spend => ({ tokens: -amount.tokens, costMicros: -amount.costMicros });
