import type { Usage } from "../contracts/run.js";
import { modelPrice, type PriceSettings } from "../settings.js";

/** Step Functions Standard: $0.025 per 1,000 state transitions (retries included). */
const USD_PER_STATE_TRANSITION = 0.025 / 1000;

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
