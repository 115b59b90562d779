import { describe, expect, it } from "vitest";
import { parseSettings } from "../../../../infra/aws/config.js";
import { settingsFromEnv } from "../../../../shared/settings.js";

/** The run input's limit counts UTF-8 bytes: set as MAX_INPUT_BYTES (maxInputBytes at synth), checked at start. */
describe("MAX_INPUT_BYTES", () => {
  it("is 96,000 by default and takes up to 200,000 (the API's 256 KiB body holds the request around it)", () => {
    expect(settingsFromEnv({ TABLE_NAME: "t" }).limits.maxInputBytes).toBe(96_000);
    expect(settingsFromEnv({ TABLE_NAME: "t", MAX_INPUT_BYTES: "200000" }).limits.maxInputBytes).toBe(200_000);
    expect(() => settingsFromEnv({ TABLE_NAME: "t", MAX_INPUT_BYTES: "200001" })).toThrow(/MAX_INPUT_BYTES/);
    expect(() => parseSettings({ maxInputBytes: "200001" })).toThrow(/maxInputBytes/);
  });

  it("refuses the old character limit by name, saying what replaced it", () => {
    expect(() => settingsFromEnv({ TABLE_NAME: "t", MAX_INPUT_CHARS: "32000" })).toThrow(
      "MAX_INPUT_CHARS is now MAX_INPUT_BYTES: a run's input is counted in UTF-8 bytes",
    );
    expect(() => parseSettings({ maxInputChars: "32000" })).toThrow("maxInputChars is now maxInputBytes");
  });
});
