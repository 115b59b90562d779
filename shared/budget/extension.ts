import { BudgetExtension, type RunBudget, toMicros } from "../contracts/budget.js";
import type { ResolveInterruptRequest } from "../contracts/interrupts.js";
import { BadRequestError } from "../errors.js";
import type { Ports } from "../ports/index.js";

/**
 * The extension an approve on a `budget` pause grants (`arguments`: tokens and/or costUsd to add;
 * none: the run's limit again), checked before anything is written; undefined for a reject.
 */
export function budgetExtensionOf(request: ResolveInterruptRequest): BudgetExtension | undefined {
  if (request.decision !== "approve") {
    if (request.arguments) throw new BadRequestError("'arguments' go only with approve on a budget pause.");
    return undefined;
  }
  const parsed = BudgetExtension.safeParse(request.arguments ?? {});
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: ["arguments", ...i.path.map(String)].join("."), message: i.message }));
    throw new BadRequestError(
      `A budget extension takes positive 'tokens' and/or 'costUsd': ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}`,
      details,
      "validation_failed",
    );
  }
  return parsed.data;
}

/** Raises the run's own limit by the extension (each limit it has; one not named grows by as much again). */
export async function extendRunBudget(ports: Pick<Ports, "runs">, runId: string, extension: BudgetExtension): Promise<void> {
  const run = await ports.runs.get(runId);
  if (!run?.budget) return;
  const named = extension.tokens !== undefined || extension.costUsd !== undefined;
  const grow = (limit: number | undefined, by: number | undefined) =>
    limit === undefined ? undefined : limit + (named ? (by ?? 0) : limit);
  const budget: RunBudget = {
    ...run.budget,
    tokens: grow(run.budget.tokens, extension.tokens),
    costMicros: grow(run.budget.costMicros, extension.costUsd === undefined ? undefined : toMicros(extension.costUsd)),
  };
  await ports.runs.update(runId, { budget });
}
