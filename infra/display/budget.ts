import type { RunBudgetView } from "../../shared/contracts/budget.js";

/** A run's budget in one line, as the CLI and the console show it: "1200 of 5000 tokens, $0.5 (pause); the tenant's: 50000 tokens a day". */
export function budgetText(view: RunBudgetView): string {
  const limit = (l: { tokens?: number; costUsd?: number }) =>
    [l.tokens !== undefined ? `${l.tokens} tokens` : "", l.costUsd !== undefined ? `$${l.costUsd}` : ""].filter(Boolean).join(", ");
  const own =
    view.tokens !== undefined || view.costUsd !== undefined
      ? `${view.spent.tokens} tokens spent of ${limit(view)}`
      : `${view.spent.tokens} tokens spent`;
  const periods = [view.day ? `${limit(view.day)} a day` : "", view.month ? `${limit(view.month)} a month` : ""].filter(Boolean);
  return `${own} (at the budget: ${view.onExhausted})${periods.length ? `; the tenant's: ${periods.join(", ")}` : ""}`;
}
