import { describe, expect, it } from "vitest";
import { settingsFromEnv } from "../../../../shared/settings.js";
import { estimatedCostUsd } from "../../../../shared/views/cost.js";

/** The estimated cost: only for a priced model, from the price table (a setting). */
describe("estimated cost", () => {
  const config = (env: Record<string, string>) => settingsFromEnv({ TABLE_NAME: "t", ...env });
  const usage = { promptTokens: 1_000_000, completionTokens: 100_000, llmCalls: 3, toolCalls: 1 };

  it("prices a model of the default table, Step Functions' transitions included", () => {
    // gpt-4o-mini: $0.15 per million prompt tokens, $0.60 per million completion tokens.
    expect(estimatedCostUsd(usage, 40, config({ STEPWISE_MODEL: "gpt-4o-mini" }))).toBe(0.15 + 0.06 + 0.001);
  });

  it("gives no figure for a model with no price: the offline model, or one missing from the table", () => {
    expect(estimatedCostUsd(usage, 40, config({ STEPWISE_MODEL: "stepwise-offline" }))).toBeUndefined();
    expect(estimatedCostUsd(usage, 40, config({ STEPWISE_MODEL: "my-local-llama" }))).toBeUndefined();
  });

  it("takes the table from MODEL_PRICES, and the two single prices over it", () => {
    const table = JSON.stringify({ "my-local-llama": [1, 2] });
    expect(estimatedCostUsd(usage, 0, config({ STEPWISE_MODEL: "my-local-llama", MODEL_PRICES: table }))).toBe(1.2);
    expect(estimatedCostUsd(usage, 0, config({ STEPWISE_MODEL: "gpt-4o-mini", MODEL_PRICES: table }))).toBeUndefined();
    expect(
      estimatedCostUsd(
        usage,
        0,
        config({ STEPWISE_MODEL: "stepwise-offline", MODEL_PRICE_INPUT_PER_MTOK: "2", MODEL_PRICE_OUTPUT_PER_MTOK: "10" }),
      ),
    ).toBe(3);
  });

  it("refuses a price table that is not model → [input, output]", () => {
    expect(() => config({ MODEL_PRICES: '{"gpt-4o-mini": 0.15}' })).toThrow(/MODEL_PRICES must be JSON like/);
    expect(() => config({ MODEL_PRICES: "not json" })).toThrow(/MODEL_PRICES must be JSON like/);
  });
});
