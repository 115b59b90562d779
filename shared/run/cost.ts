import type { Config } from "../config.js";
import type { Usage } from "../contracts/run.js";

/** Step Functions Standard: $0.025 per 1,000 state transitions (retries included). */
const USD_PER_STATE_TRANSITION = 0.025 / 1000;

/** An estimate in USD from the configured model prices; Lambda and DynamoDB are left out (small beside these). */
export function estimatedCostUsd(usage: Usage, stateTransitions: number | undefined, config: Pick<Config, "MODEL_PRICE_INPUT_PER_MTOK" | "MODEL_PRICE_OUTPUT_PER_MTOK">): number {
  const model = (usage.promptTokens * config.MODEL_PRICE_INPUT_PER_MTOK + usage.completionTokens * config.MODEL_PRICE_OUTPUT_PER_MTOK) / 1_000_000;
  const cost = model + (stateTransitions ?? 0) * USD_PER_STATE_TRANSITION;
  return Math.round(cost * 1_000_000) / 1_000_000;
}
