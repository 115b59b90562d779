import type { Config } from "../config.js";
import type { Usage } from "../contracts/run.js";

/** Step Functions Standard: $0.025 per 1,000 state transitions (retries included). */
const USD_PER_STATE_TRANSITION = 0.025 / 1000;

type PriceConfig = Pick<Config, "STEPWISE_MODEL" | "MODEL_PRICES" | "MODEL_PRICE_INPUT_PER_MTOK" | "MODEL_PRICE_OUTPUT_PER_MTOK">;

/**
 * The model's price in USD per million prompt / completion tokens: the two price settings when
 * given, else its line in the price table (MODEL_PRICES); undefined for a model with no price.
 */
export function modelPrice(config: PriceConfig): { input: number; output: number } | undefined {
  if (config.MODEL_PRICE_INPUT_PER_MTOK !== undefined || config.MODEL_PRICE_OUTPUT_PER_MTOK !== undefined) {
    return { input: config.MODEL_PRICE_INPUT_PER_MTOK ?? 0, output: config.MODEL_PRICE_OUTPUT_PER_MTOK ?? 0 };
  }
  const price = config.MODEL_PRICES[config.STEPWISE_MODEL];
  return price && { input: price[0], output: price[1] };
}

/**
 * An estimate in USD from the model's price and Step Functions' (Lambda and DynamoDB are left out,
 * small beside these); undefined when the model has no price (the offline model, a model missing
 * from the table): no figure rather than a wrong one.
 */
export function estimatedCostUsd(usage: Usage, stateTransitions: number | undefined, config: PriceConfig): number | undefined {
  const price = modelPrice(config);
  if (!price) return undefined;
  const model = (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1_000_000;
  const cost = model + (stateTransitions ?? 0) * USD_PER_STATE_TRANSITION;
  return Math.round(cost * 1_000_000) / 1_000_000;
}
