import * as z from "zod";

/** What a run does at its budget: wait for a person to extend it, or end with a summary of what it did. */
export const OnExhausted = z.enum(["pause", "deliver"]);
export type OnExhausted = z.infer<typeof OnExhausted>;

/** A spending limit: tokens (prompt and completion) and/or estimated cost in USD; each above zero. */
export const SpendLimit = z
  .strictObject({
    tokens: z.number().int().positive("a token budget must be above zero").optional(),
    costUsd: z.number().positive("a cost budget must be above zero").optional(),
  })
  .refine((limit) => limit.tokens !== undefined || limit.costUsd !== undefined, "name tokens, costUsd or both");
export type SpendLimit = z.infer<typeof SpendLimit>;

/** `budget` on `POST /v1/runs`: the run's own limit, and what it does when it reaches it (default: the tenant's choice, else pause). */
export const RunBudgetRequest = z.strictObject({
  tokens: z.number().int().positive("a token budget must be above zero").optional(),
  costUsd: z.number().positive("a cost budget must be above zero").optional(),
  onExhausted: OnExhausted.optional(),
});
export type RunBudgetRequest = z.infer<typeof RunBudgetRequest>;

/** `budget` in `PUT /v1/settings`: every run's default limit, the tenant's per-day and per-month limits (UTC). */
export const TenantBudget = z.strictObject({
  run: SpendLimit.optional(),
  day: SpendLimit.optional(),
  month: SpendLimit.optional(),
  onExhausted: OnExhausted.optional(),
});
export type TenantBudget = z.infer<typeof TenantBudget>;

/**
 * What a run keeps of its budgets, fixed at submission (a later change of the tenant's settings
 * applies to later runs): its own limit (raised by each extension a person grants) and the
 * tenant's period limits. Costs are in micro-USD, whole numbers, so counters add up exactly.
 */
export const RunBudget = z.object({
  tokens: z.number().int().optional(),
  costMicros: z.number().int().optional(),
  onExhausted: OnExhausted,
  day: z.object({ tokens: z.number().int().optional(), costMicros: z.number().int().optional() }).optional(),
  month: z.object({ tokens: z.number().int().optional(), costMicros: z.number().int().optional() }).optional(),
  /** Set when the run ended at its budget with a delivered summary (status `budget_exhausted`). */
  exhausted: z.string().optional(),
});
export type RunBudget = z.infer<typeof RunBudget>;

const LimitView = z.object({ tokens: z.number().int().optional(), costUsd: z.number().optional() });

/** `budget` in a run's view: its limits (costs in USD), what it does at them, and what it has spent. */
export const RunBudgetView = z.object({
  tokens: z.number().int().optional(),
  costUsd: z.number().optional(),
  onExhausted: OnExhausted,
  /** The tenant's limits per day and per month, as fixed on the run. */
  day: LimitView.optional(),
  month: LimitView.optional(),
  /** What the run's model calls have spent (the cost: `estimatedCostUsd`). */
  spent: z.object({ tokens: z.number().int() }),
  /** Why the run stopped at a budget, when it did. */
  exhausted: z.string().optional(),
});
export type RunBudgetView = z.infer<typeof RunBudgetView>;

/** A run's budget as its view shows it, with what its calls spent. */
export function runBudgetView(budget: RunBudget, spentTokens: number): RunBudgetView {
  const usd = (limit: { tokens?: number; costMicros?: number }) => ({
    ...(limit.tokens !== undefined ? { tokens: limit.tokens } : {}),
    ...(limit.costMicros !== undefined ? { costUsd: fromMicros(limit.costMicros) } : {}),
  });
  return {
    ...usd(budget),
    onExhausted: budget.onExhausted,
    ...(budget.day ? { day: usd(budget.day) } : {}),
    ...(budget.month ? { month: usd(budget.month) } : {}),
    spent: { tokens: spentTokens },
    ...(budget.exhausted ? { exhausted: budget.exhausted } : {}),
  };
}

/** An amount spent or reserved. */
export interface Spend {
  tokens: number;
  costMicros: number;
}

export const toMicros = (usd: number) => Math.round(usd * 1_000_000);
export const fromMicros = (micros: number) => micros / 1_000_000;

/** `arguments` of an approve on a `budget` interrupt: how much to add (default: the run's limit again). */
export const BudgetExtension = z.strictObject({
  tokens: z.number().int().positive("an extension must be above zero").optional(),
  costUsd: z.number().positive("an extension must be above zero").optional(),
});
export type BudgetExtension = z.infer<typeof BudgetExtension>;
