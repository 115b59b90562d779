import type { Spend } from "../contracts/budget.js";

/** The counters a model call is charged to: its run's, and its tenant's for the day and the month (UTC) of `at`. */
export interface SpendAccount {
  tenantId: string;
  runId: string;
  at: Date;
}

export type SpendPeriod = "run" | "day" | "month";
export const SPEND_PERIODS: readonly SpendPeriod[] = ["run", "day", "month"];

/** A limit on each counter (a missing one is not limited). */
export type SpendLimits = Partial<Record<SpendPeriod, Partial<Spend>>>;

export type SpendTotals = Record<SpendPeriod, Spend>;

/**
 * The spend ledger port: what runs and tenants have spent and reserved. A reservation is one
 * conditional write on all three counters at once: it is taken only if no counter would then pass
 * its limit, so two runs racing for the last of a budget cannot both take it.
 * Adapter: SpendStore (DynamoDB); fake: shared/testing/memorySpend.ts.
 */
export interface SpendLedger {
  /** Adds `amount` to the run's, the day's and the month's counters if none would pass its limit; else which one would. */
  reserve(account: SpendAccount, amount: Spend, limits: SpendLimits): Promise<{ reserved: true } | { reserved: false; over: SpendPeriod }>;
  /** Adds `delta` (negative to give back) to the three counters, unconditionally: a reservation settled to what was spent. */
  adjust(account: SpendAccount, delta: Spend): Promise<void>;
  /** The counters as they stand (zero when nothing was spent). */
  totals(account: SpendAccount): Promise<SpendTotals>;
}

/** The first counter the amount would take past its limit (the refusal's reason). */
export function overLimit(totals: SpendTotals, amount: Spend, limits: SpendLimits): SpendPeriod {
  for (const period of SPEND_PERIODS) {
    const limit = limits[period];
    if (!limit) continue;
    if (limit.tokens !== undefined && totals[period].tokens + amount.tokens > limit.tokens) return period;
    if (limit.costMicros !== undefined && totals[period].costMicros + amount.costMicros > limit.costMicros) return period;
  }
  // Spent back below the limit since the refusal: still refused, charged to the run.
  return "run";
}
