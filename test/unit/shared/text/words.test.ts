import { describe, expect, it } from "vitest";
import { keywords, wordsOf } from "../../../../shared/text/words.js";

describe("words in any script", () => {
  it.each([
    ["Chinese", "2026年太阳能装机容量增长了多少？", ["2026", "太阳", "容量", "增长"]],
    ["Japanese", "東京の人口はどのくらいですか", ["東京", "人口"]],
    ["Thai", "ประชากรของกรุงเทพมีเท่าไหร่", ["ประชากร", "กรุงเทพ", "เท่า"]],
    ["English", "How fast did Solar power grow in 2026?", ["fast", "solar", "power", "grow", "2026"]],
  ])("a %s question is several words, function words left out", (_, question, expected) => {
    expect(keywords(question)).toEqual(expected);
  });

  it("finds words where they start, in compatibility form and lowercase", () => {
    expect(wordsOf("Ｓｏｌａｒ：２０２６年")).toEqual([
      { text: "solar", index: 0 },
      { text: "2026", index: 6 },
      { text: "年", index: 10 },
    ]);
  });
});
