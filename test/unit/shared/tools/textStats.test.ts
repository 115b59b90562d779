import { describe, expect, it } from "vitest";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { textStats } from "../../../../shared/tools/textStats.js";

describe("text_stats", () => {
  it("counts the words of a text written without spaces, and lists its frequent terms", async () => {
    const output = await textStats.run({ text: "太阳能装机容量增长了。太阳能发电增长最快！" }, testToolContext());
    expect(output).toBe("21 characters, 12 words, 2 sentences; frequent terms: 增长 (2), 太阳 (2), 最快 (1), 发电 (1), 容量 (1)");
  });

  it("counts English words and contractions as a reader does", async () => {
    expect(await textStats.run({ text: "Don't count the words twice. Count them once!" }, testToolContext())).toBe(
      "45 characters, 8 words, 2 sentences; frequent terms: count (2), don't (1), once (1), them (1), twice (1)",
    );
  });

  it("says one sentence, not one sentences", async () => {
    expect(await textStats.run({ text: "Hello there" }, testToolContext())).toBe(
      "11 characters, 2 words, 1 sentence; frequent terms: hello (1), there (1)",
    );
  });
});
