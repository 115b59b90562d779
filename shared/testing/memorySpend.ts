import type { Spend } from "../contracts/budget.js";
import { overLimit, SPEND_PERIODS, type SpendAccount, type SpendLedger, type SpendLimits, type SpendTotals } from "../ports/spend.js";

/** The spend ledger in memory: the same counters and the same all-or-nothing reservation. */
export class MemorySpend implements SpendLedger {
  readonly counters = new Map<string, Spend>();
  /** Reservations taken (each would be one conditional write on the table). */
  reservations = 0;

  private keysOf({ tenantId, runId, at }: SpendAccount): Record<keyof SpendTotals, string> {
    const day = at.toISOString().slice(0, 10);
    return { run: `${tenantId}|${day.slice(0, 7)}|run|${runId}`, day: `${tenantId}|${day}`, month: `${tenantId}|${day.slice(0, 7)}` };
  }

  async reserve(account: SpendAccount, amount: Spend, limits: SpendLimits) {
    // Read and written with no await between: as atomic as the table's conditional write.
    const totals = this.read(account);
    const fits = SPEND_PERIODS.every((period) => {
      const limit = limits[period];
      return (
        (limit?.tokens === undefined || totals[period].tokens + amount.tokens <= limit.tokens) &&
        (limit?.costMicros === undefined || totals[period].costMicros + amount.costMicros <= limit.costMicros)
      );
    });
    if (!fits) return { reserved: false as const, over: overLimit(totals, amount, limits) };
    this.reservations++;
    this.add(account, amount);
    return { reserved: true as const };
  }

  async adjust(account: SpendAccount, delta: Spend): Promise<void> {
    this.add(account, delta);
  }

  async totals(account: SpendAccount): Promise<SpendTotals> {
    return this.read(account);
  }

  private read(account: SpendAccount): SpendTotals {
    const keys = this.keysOf(account);
    const read = (key: string) => ({ ...(this.counters.get(key) ?? { tokens: 0, costMicros: 0 }) });
    return { run: read(keys.run), day: read(keys.day), month: read(keys.month) };
  }

  private add(account: SpendAccount, amount: Spend): void {
    for (const key of Object.values(this.keysOf(account))) {
      const now = this.counters.get(key) ?? { tokens: 0, costMicros: 0 };
      this.counters.set(key, { tokens: now.tokens + amount.tokens, costMicros: now.costMicros + amount.costMicros });
    }
  }
}
