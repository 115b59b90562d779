import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compressUrls, createUrlTable, DEFAULT_URL_MIN_LENGTH, restoreUrls, UrlTable } from "../../../../shared/memory/urls.js";

const LONG = "https://cdn.gaoding.com/design/abc.jpg?auth_key=abc123def456ghi789jkl012&expires=1700000000";
const OTHER = "https://images.example.com/assets/2024/11/very/deep/path/to/picture-0042.png?size=large";
const SHORT = "https://example.com/a.png";

describe("compressUrls", () => {
  it("replaces long URLs with numbered placeholders and leaves short ones", () => {
    const table = createUrlTable();
    expect(compressUrls(`Images: ${LONG} and ${SHORT} and ${OTHER}`, table)).toBe(`Images: [url:1] and ${SHORT} and [url:2]`);
    expect(table).toEqual({ urls: [LONG, OTHER] });
  });

  it("gives a URL seen before the same placeholder, in this text and in later ones", () => {
    const table = createUrlTable();
    expect(compressUrls(`${LONG} ${LONG}`, table)).toBe("[url:1] [url:1]");
    expect(compressUrls(`again ${OTHER} then ${LONG}`, table)).toBe("again [url:2] then [url:1]");
  });

  it("uses the threshold: longer than DEFAULT_URL_MIN_LENGTH characters, or the one given", () => {
    const exactly = `https://example.com/${"a".repeat(DEFAULT_URL_MIN_LENGTH - 20)}`;
    expect(exactly).toHaveLength(DEFAULT_URL_MIN_LENGTH);
    expect(compressUrls(exactly, createUrlTable())).toBe(exactly);
    expect(compressUrls(`${exactly}b`, createUrlTable())).toBe("[url:1]");
    expect(compressUrls(SHORT, createUrlTable(), 10)).toBe("[url:1]");
  });

  it.each([
    ["a sentence's full stop", `See ${LONG}.`, "See [url:1]."],
    ["a comma and more punctuation", `${LONG}, ${LONG}!? ${LONG}:`, "[url:1], [url:1]!? [url:1]:"],
    ["parentheses around it", `(see ${LONG})`, "(see [url:1])"],
    ["a Markdown link", `[the picture](${LONG})`, "[the picture]([url:1])"],
    ["a Markdown link whose text is the URL", `[${LONG}](${LONG})`, "[[url:1]]([url:1])"],
    ["a Markdown image with a title", `![alt](${LONG} "title")`, '![alt]([url:1] "title")'],
    ["an autolink", `<${LONG}>`, "<[url:1]>"],
    ["quotes in JSON", `{"image_url":"${LONG}"}`, '{"image_url":"[url:1]"}'],
    ["bold Markdown", `**${LONG}**`, "**[url:1]**"],
    ["Chinese punctuation", `图片：${LONG}，请查看。`, "图片：[url:1]，请查看。"],
  ])("handles %s", (_, text, expected) => {
    expect(compressUrls(text, createUrlTable())).toBe(expected);
  });

  it("keeps parentheses that belong to the URL", () => {
    const wiki = "https://en.wikipedia.org/wiki/Byte_pair_encoding_(compression_algorithm)_history";
    const table = createUrlTable();
    expect(compressUrls(`[BPE](${wiki})`, table)).toBe("[BPE]([url:1])");
    expect(table.urls).toEqual([wiki]);
  });

  it("leaves text without URLs, and already compressed text, unchanged", () => {
    const table = createUrlTable();
    const compressed = compressUrls(`look at ${LONG}`, table);
    expect(compressUrls(compressed, table)).toBe(compressed);
    expect(compressUrls("no links here (really).", table)).toBe("no links here (really).");
    expect(table.urls).toHaveLength(1);
  });
});

describe("restoreUrls", () => {
  const table: UrlTable = { urls: [LONG, OTHER] };

  it("restores placeholders inside strings", () => {
    expect(restoreUrls("Use [url:2], then [url:1].", table)).toBe(`Use ${OTHER}, then ${LONG}.`);
  });

  it("restores deeply inside tool-call arguments and leaves other values alone", () => {
    const args = { image_url: "[url:1]", layers: [{ src: "[url:2]", opacity: 0.5 }, null, true], note: "keep [url:9] and url:1" };
    expect(restoreUrls(args, table)).toEqual({
      image_url: LONG,
      layers: [{ src: OTHER, opacity: 0.5 }, null, true],
      note: "keep [url:9] and url:1",
    });
    expect(args.image_url).toBe("[url:1]"); // a copy: the input is not changed
  });

  it("restores inside raw JSON arguments and keeps them valid JSON", () => {
    const raw = '{"image_url":"[url:1]","alt":"x"}';
    expect(JSON.parse(restoreUrls(raw, table))).toEqual({ image_url: LONG, alt: "x" });
  });

  it("round-trips through a persisted table", () => {
    const table = createUrlTable();
    const text = `First ${LONG}, then (${OTHER}).`;
    const compressed = compressUrls(text, table);
    const persisted = UrlTable.parse(JSON.parse(JSON.stringify(table)));
    expect(restoreUrls(compressed, persisted)).toBe(text);
  });

  it("restores any compressed text to the original (property)", () => {
    const segment = fc.oneof(
      fc.constantFrom(LONG, OTHER, SHORT, " ", ", ", ". ", "(", ")", "[", "](", '"', "，"),
      fc.lorem({ maxCount: 3 }),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 12 }), (segments) => {
        const text = segments.join("");
        const table = createUrlTable();
        const compressed = compressUrls(text, table);
        expect(restoreUrls(compressed, table)).toBe(text);
        expect(compressed.length).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 300 },
    );
  });
});
