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

/** The spend ledger in memory: one counter per run, tenant-day and tenant-month, written only when limited. */
export class MemorySpend implements SpendLedger {
  readonly counters = new Map<string, Spend>();
  /** Counter writes made (each would be one UpdateItem on the table), rollbacks included. */
  writes = 0;

  private keyOf(period: SpendPeriod, { tenantId, runId, at }: SpendAccount): string {
    return period === "run" ? `run|${runId}` : `${tenantId}|${tenantPeriod(period, at)}`;
  }

  async reserve(account: SpendAccount, amount: Spend, limits: SpendLimits) {
    const periods = limitedPeriods(limits);
    const hopeless = periods.find((period) => beyondLimit(amount, limits[period] ?? {}));
    if (hopeless) return { reserved: false as const, over: hopeless };
    // Each counter read and written with no await between: as atomic as the table's conditional write.
    const taken: SpendPeriod[] = [];
    for (const period of periods) {
      const now = this.read(period, account);
      if (beyondLimit({ tokens: now.tokens + amount.tokens, costMicros: now.costMicros + amount.costMicros }, limits[period] ?? {})) {
        for (const done of taken) this.add(done, account, { tokens: -amount.tokens, costMicros: -amount.costMicros });
        return { reserved: false as const, over: period };
      }
      this.add(period, account, amount);
      taken.push(period);
      // Let racing reservations interleave between counters, as separate writes do.
      await Promise.resolve();
    }
    return { reserved: true as const };
  }

  async adjust(account: SpendAccount, delta: Spend, limits: SpendLimits): Promise<void> {
    if (delta.tokens === 0 && delta.costMicros === 0) return;
    for (const period of limitedPeriods(limits)) this.add(period, account, delta);
  }

  async totals(account: SpendAccount): Promise<SpendTotals> {
    return { run: this.read("run", account), day: this.read("day", account), month: this.read("month", account) };
  }

  private read(period: SpendPeriod, account: SpendAccount): Spend {
    return { ...(this.counters.get(this.keyOf(period, account)) ?? { tokens: 0, costMicros: 0 }) };
  }

  private add(period: SpendPeriod, account: SpendAccount, amount: Spend): void {
    this.writes++;
    const now = this.read(period, account);
    this.counters.set(this.keyOf(period, account), { tokens: now.tokens + amount.tokens, costMicros: now.costMicros + amount.costMicros });
  }
}
