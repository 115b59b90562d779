import type { Spend } from "../contracts/budget.js";

/** The counters a model call is charged to: its run's, and its tenant's for the day and the month (UTC) of `at`. */
export interface SpendAccount {
  tenantId: string;
  runId: string;
  at: Date;
}

export type SpendPeriod = "run" | "day" | "month";
export const SPEND_PERIODS: readonly SpendPeriod[] = ["run", "day", "month"];

/** A limit on each counter; a counter with no limit is neither checked nor written. */
export type SpendLimits = Partial<Record<SpendPeriod, Partial<Spend>>>;

export type SpendTotals = Record<SpendPeriod, Spend>;

/** The UTC day (`2026-11-28`) or month (`2026-11`) a tenant's day or month counter is kept for. */
export function tenantPeriod(period: "day" | "month", at: Date): string {
  const day = at.toISOString().slice(0, 10);
  return period === "day" ? day : day.slice(0, 7);
}

/** The counters a set of limits names, in the order a reservation takes them. */
export const limitedPeriods = (limits: SpendLimits): SpendPeriod[] => SPEND_PERIODS.filter((period) => limits[period]);

/**
 * The spend ledger port: what runs and tenants have spent and reserved. Each counter is its own
 * small record (the run's; the tenant's day; the tenant's month), and only counters that have a
 * limit are written: a reservation is one conditional write per limited counter, run first, each
 * taken only if it stays within its limit, so two runs racing for the last of a budget cannot both
 * take it; when a later counter refuses, those already taken are given back.
 * Adapter: SpendStore (DynamoDB); fake: shared/testing/memorySpend.ts.
 */
export interface SpendLedger {
  /** Adds `amount` to each limited counter if none would pass its limit; else says which one would, and nothing stays added. */
  reserve(account: SpendAccount, amount: Spend, limits: SpendLimits): Promise<{ reserved: true } | { reserved: false; over: SpendPeriod }>;
  /** Adds `delta` (negative to give back) to the limited counters, unconditionally: a reservation settled to what was spent. */
  adjust(account: SpendAccount, delta: Spend, limits: SpendLimits): Promise<void>;
  /** The counters as they stand (zero when nothing was written). */
  totals(account: SpendAccount): Promise<SpendTotals>;
}

/** Whether `amount` alone is more than a limit allows (no write could ever take it). */
export function beyondLimit(amount: Spend, limit: Partial<Spend>): boolean {
  return (
    (limit.tokens !== undefined && amount.tokens > limit.tokens) || (limit.costMicros !== undefined && amount.costMicros > limit.costMicros)
  );
}
