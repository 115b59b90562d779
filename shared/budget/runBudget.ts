import type { RunBudget, RunBudgetRequest, SpendLimit, TenantBudget } from "../contracts/budget.js";
import { toMicros } from "../contracts/budget.js";
import { BadRequestError, StepwiseError } from "../errors.js";
import type { Ports } from "../ports/index.js";
import type { SpendPeriod } from "../ports/spend.js";
import { modelPrice, type PriceSettings } from "../settings.js";

/** A tenant over its daily or monthly budget: no new run until the period turns (429, Retry-After). */
export class OverBudgetError extends StepwiseError {
  constructor(
    readonly period: Exclude<SpendPeriod, "run">,
    readonly retryAfterSeconds: number,
  ) {
    super(
      `This tenant has spent its ${period === "day" ? "daily" : "monthly"} budget. Retry after ${retryAfterSeconds} s (when the ${period} turns, UTC), or raise the budget in the tenant's settings.`,
      { statusCode: 429, code: "over_budget", details: { period, retryAfterSeconds } },
    );
  }
}

const limitOf = (limit: Pick<SpendLimit, "tokens" | "costUsd"> | undefined) =>
  limit && {
    ...(limit.tokens !== undefined ? { tokens: limit.tokens } : {}),
    ...(limit.costUsd !== undefined ? { costMicros: toMicros(limit.costUsd) } : {}),
  };

/**
 * The budget a new run is recorded with: its own limit (the request's, else the tenant's default
 * for a run), what it does when spent (the request's, else the tenant's, else pause) and the
 * tenant's period limits; undefined when there is none. A cost limit needs the model's price.
 */
export function runBudgetOf(
  settings: PriceSettings,
  request: RunBudgetRequest | undefined,
  tenant: TenantBudget | undefined,
): RunBudget | undefined {
  const own = request?.tokens !== undefined || request?.costUsd !== undefined ? request : tenant?.run;
  if (!own && !tenant?.day && !tenant?.month) return undefined;
  const costs = [own?.costUsd, tenant?.day?.costUsd, tenant?.month?.costUsd].some((c) => c !== undefined);
  if (costs && !modelPrice(settings)) {
    throw new BadRequestError(
      `A cost budget needs the model's price, and ${settings.model.name} has none: set MODEL_PRICE_INPUT_PER_MTOK and MODEL_PRICE_OUTPUT_PER_MTOK, or use a token budget.`,
      { model: settings.model.name },
      "no_price",
    );
  }
  return {
    ...limitOf(own),
    onExhausted: request?.onExhausted ?? tenant?.onExhausted ?? "pause",
    ...(tenant?.day ? { day: limitOf(tenant.day) } : {}),
    ...(tenant?.month ? { month: limitOf(tenant.month) } : {}),
  };
}

/** Refuses a new run when the tenant's day or month is spent (at every door, before anything is written). */
export async function assertTenantHasBudget(ports: Pick<Ports, "spend">, tenantId: string, budget: RunBudget | undefined): Promise<void> {
  if (!budget?.day && !budget?.month) return;
  const now = new Date();
  const totals = await ports.spend.totals({ tenantId, runId: "-", at: now });
  for (const period of ["day", "month"] as const) {
    const limit = budget[period];
    const spent = totals[period];
    if (!limit) continue;
    if (
      (limit.tokens !== undefined && spent.tokens >= limit.tokens) ||
      (limit.costMicros !== undefined && spent.costMicros >= limit.costMicros)
    ) {
      throw new OverBudgetError(period, secondsUntilNext(period, now));
    }
  }
}

/** Seconds until the next UTC day or month begins. */
function secondsUntilNext(period: "day" | "month", now: Date): number {
  const next =
    period === "day"
      ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
      : Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
