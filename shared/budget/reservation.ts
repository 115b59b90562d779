import type { RunBudget, Spend } from "../contracts/budget.js";
import { StepwiseError } from "../errors.js";
import { windowOf } from "../llm/providerRules.js";
import { settingsFor } from "../llm/roleSettings.js";
import { type ChatModel, type ChatRequest, paidAttemptsOf } from "../llm/types.js";
import { tokenCounterFor } from "../memory/tokens.js";
import type { Ports } from "../ports/index.js";
import { limitedPeriods, type SpendAccount, type SpendLimits, type SpendPeriod } from "../ports/spend.js";
import { modelPrice, type PriceSettings } from "../settings.js";

/** A model call refused because its worst case would pass a budget: the call was not made. */
export class BudgetExhaustedError extends StepwiseError {
  constructor(
    readonly over: SpendPeriod,
    readonly reservation: Spend,
  ) {
    super(
      `${over === "run" ? "The run's" : `The tenant's ${over === "day" ? "daily" : "monthly"}`} budget has no room for the next model call.`,
      {
        statusCode: 429,
        code: "budget_exhausted",
        details: { over, reservation },
      },
    );
  }
}

/** The run, as its budget sees it. */
export interface BudgetedRun {
  runId: string;
  tenantId: string;
  budget?: RunBudget;
}

/** The limits a run's calls are reserved against: its own and its tenant's for the day and the month. */
export function limitsOf(budget: RunBudget | undefined): SpendLimits {
  if (!budget) return {};
  const run =
    budget.tokens !== undefined || budget.costMicros !== undefined ? { tokens: budget.tokens, costMicros: budget.costMicros } : undefined;
  return { ...(run ? { run } : {}), ...(budget.day ? { day: budget.day } : {}), ...(budget.month ? { month: budget.month } : {}) };
}

/** Cost in micro-USD of tokens at the model's price (0 for a model with no price). */
export function costMicros(settings: Partial<PriceSettings>, promptTokens: number, completionTokens: number): number {
  const price = settings.model && settings.prices && modelPrice({ model: settings.model, prices: settings.prices });
  return price ? Math.ceil(promptTokens * price.input + completionTokens * price.output) : 0;
}

/** What a budget-aware model needs: the ledger and the settings that size a call. */
export type BudgetPorts = Pick<Ports, "spend"> & { settings: Partial<PriceSettings> };

/**
 * The model, with every call reserved before it starts and settled after: the worst case (the
 * prompt's tokens plus the role's output limit, and their cost) is reserved on each counter that
 * has a limit (the run's, the tenant's day and month), one conditional write each; a call that
 * would pass a budget is not made (BudgetExhaustedError); after the call, the reservation becomes
 * what the provider reported. A run with no budget anywhere writes nothing here.
 */
export function withBudget(model: ChatModel, ports: BudgetPorts, run: () => Promise<BudgetedRun>): ChatModel {
  const counter = tokenCounterFor(model.name);
  return {
    name: model.name,
    async complete(request: ChatRequest) {
      const { runId, tenantId, budget } = await run();
      const limits = limitsOf(budget);
      if (!limitedPeriods(limits).length) return model.complete(request);
      const account: SpendAccount = { tenantId, runId, at: new Date() };
      const reservation = worstCase(ports.settings, model.name, counter.countMessages(request.messages), request);
      const taken = await ports.spend.reserve(account, reservation, limits);
      if (!taken.reserved) throw new BudgetExhaustedError(taken.over, reservation);
      const settle = (usage: { promptTokens: number; completionTokens: number } | undefined) =>
        ports.spend.adjust(
          account,
          {
            tokens: (usage ? usage.promptTokens + usage.completionTokens : 0) - reservation.tokens,
            costMicros: (usage ? costMicros(ports.settings, usage.promptTokens, usage.completionTokens) : 0) - reservation.costMicros,
          },
          limits,
        );
      try {
        const response = await model.complete(request);
        await settle(response.usage);
        return response;
      } catch (error) {
        // What a failed call had already cost stays spent; the rest is given back.
        await settle(paidAttemptsOf(error).usage).catch(() => undefined);
        throw error;
      }
    },
  };
}

/** A call's worst case: its prompt, its tools' schemas and the role's whole output limit. */
function worstCase(settings: BudgetPorts["settings"], model: string, promptTokens: number, request: ChatRequest): Spend {
  const output = request.settings?.maxOutputTokens ?? windowOf(settingsFor(request.role, settings.model?.roles), model).maxOutputTokens;
  const prompt = promptTokens + Math.ceil(JSON.stringify(request.tools ?? []).length / 4);
  return { tokens: prompt + output, costMicros: costMicros(settings, prompt, output) };
}
