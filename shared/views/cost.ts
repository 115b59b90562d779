import type { Usage } from "../contracts/run.js";
import type { Settings } from "../settings.js";

/** Step Functions Standard: $0.025 per 1,000 state transitions (retries included). */
const USD_PER_STATE_TRANSITION = 0.025 / 1000;

/** The model and the prices: what an estimate needs of the settings. */
type PriceSettings = Pick<Settings, "model" | "prices">;

/**
 * The model's price in USD per million prompt / completion tokens: the two price settings when
 * given, else its line in the price table; undefined for a model with no price.
 */
function modelPrice({ model, prices }: PriceSettings): { input: number; output: number } | undefined {
  if (prices.inputPerMTok !== undefined || prices.outputPerMTok !== undefined) {
    return { input: prices.inputPerMTok ?? 0, output: prices.outputPerMTok ?? 0 };
  }
  const price = prices.table[model.name];
  return price && { input: price[0], output: price[1] };
}

/**
 * An estimate in USD from the model's price and Step Functions' (Lambda and DynamoDB are left out,
 * small beside these); undefined when the model has no price (the offline model, a model missing
 * from the table): no figure rather than a wrong one.
 */
export function estimatedCostUsd(usage: Usage, stateTransitions: number | undefined, settings: PriceSettings): number | undefined {
  const price = modelPrice(settings);
  if (!price) return undefined;
  const model = (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1_000_000;
  const cost = model + (stateTransitions ?? 0) * USD_PER_STATE_TRANSITION;
  return Math.round(cost * 1_000_000) / 1_000_000;
}
