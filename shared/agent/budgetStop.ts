import { BudgetExhaustedError, type BudgetedRun, withBudget } from "../budget/reservation.js";
import { fromMicros, type RunBudget } from "../contracts/budget.js";
import { NotFoundError } from "../errors.js";
import type { ChatMessage, ChatModel } from "../llm/types.js";
import { interruptIdFor, openInterrupt } from "./interrupts.js";
import type { RunScope } from "./loop.js";

/**
 * The loop's model with the run's budgets: those the caller read with the run's record, or else the
 * run read once, on the first call (a run that waited for an extension starts a new loop, which
 * reads the extended budget).
 */
export function budgetedModel(run: RunScope): ChatModel {
  const { tenantId, budget } = run;
  let record: Promise<BudgetedRun> | undefined =
    tenantId && budget !== undefined ? Promise.resolve({ runId: run.runId, tenantId, budget: budget ?? undefined }) : undefined;
  const read = () => {
    record ??= run.ports.runs.get(run.runId).then((found) => {
      if (!found) throw new NotFoundError(`run ${run.runId} not found`);
      return found;
    });
    return record;
  };
  return withBudget(run.ports.model, run.ports, read);
}

/** What the loop does when a call would pass a budget: wait for a person, or stop with a summary. */
export type BudgetOutcome = { kind: "interrupted"; interruptId: string } | { kind: "budget"; text: string; exhausted: string };

/**
 * A model call was refused at a budget. When the run's own budget is spent and the run pauses at
 * it, a `budget` interrupt asks a person to extend it (approve, with how much to add) or end the
 * run (reject); once rejected, or when the tenant's day or month is spent (no person of the run can
 * extend that), or when the run delivers at its budget, the agent stops with a summary built from
 * what it did, with no further model call, and the run is marked to end `budget_exhausted`.
 */
export async function atBudget(
  run: RunScope,
  place: { scope: string; round: number; taskId?: string },
  refusal: BudgetExhaustedError,
  conversation: readonly ChatMessage[],
): Promise<BudgetOutcome> {
  const record = await run.ports.runs.get(run.runId);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const budget: RunBudget = record.budget ?? { onExhausted: "pause" };
  const reason = stopReason(refusal, budget);
  if (refusal.over === "run" && budget.onExhausted === "pause") {
    const interruptId = interruptIdFor(run.runId, place.scope, place.round, "budget", budget.tokens ?? "-", budget.costMicros ?? "-");
    const decided = await run.ports.interrupts.get(run.runId, interruptId);
    if (!decided || decided.status === "pending") {
      await openInterrupt(run.ports, {
        interruptId,
        runId: run.runId,
        kind: "budget",
        summary: `${reason} Approve to extend it (arguments: tokens and/or costUsd to add; by default as much again), or reject to end the run with a summary.`,
        ...(place.taskId ? { taskId: place.taskId } : {}),
        arguments: { over: "run", limit: describe(budget), nextCall: { tokens: refusal.reservation.tokens } },
      });
      return { kind: "interrupted", interruptId };
    }
  }
  await run.ports.runs.update(run.runId, { budget: { ...budget, exhausted: reason } });
  return { kind: "budget", text: summaryOf(conversation, reason), exhausted: reason };
}

function describe(budget: RunBudget): { tokens?: number; costUsd?: number } {
  return {
    ...(budget.tokens !== undefined ? { tokens: budget.tokens } : {}),
    ...(budget.costMicros !== undefined ? { costUsd: fromMicros(budget.costMicros) } : {}),
  };
}

function stopReason(refusal: BudgetExhaustedError, budget: RunBudget): string {
  const limit = refusal.over === "run" ? describe(budget) : describe({ onExhausted: "deliver", ...budget[refusal.over] });
  const parts = [limit.tokens !== undefined ? `${limit.tokens} tokens` : "", limit.costUsd !== undefined ? `$${limit.costUsd}` : ""];
  const whose = refusal.over === "run" ? "the run's budget" : `the tenant's ${refusal.over === "day" ? "daily" : "monthly"} budget`;
  return `Stopped at ${whose} (${parts.filter(Boolean).join(", ")}): the next model call could need ${refusal.reservation.tokens} tokens.`;
}

/** The delivered summary, with no model call: the agent's last words and the tools it called. */
function summaryOf(conversation: readonly ChatMessage[], reason: string): string {
  const said = conversation.filter((m) => m.role === "assistant" && typeof m.content === "string" && m.content.trim());
  const last = said.at(-1)?.content as string | undefined;
  const calls = conversation.flatMap((m) =>
    m.role === "assistant" && m.tool_calls ? m.tool_calls.map((c) => (c.type === "function" ? c.function.name : c.custom.name)) : [],
  );
  const done = calls.length
    ? `Tool calls made: ${[...new Set(calls)].map((name) => `${name} (${calls.filter((c) => c === name).length})`).join(", ")}.`
    : "No tool was called.";
  return [reason, last ? `Last progress:\n\n${last.trim()}` : "The agent had not written an answer yet.", done].join("\n\n");
}

export { BudgetExhaustedError };
