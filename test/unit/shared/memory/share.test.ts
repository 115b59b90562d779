import { describe, expect, it } from "vitest";
import { MIN_SHARE_CHARS, shareBudget } from "../../../../shared/memory/share.js";

describe("shareBudget", () => {
  it("keeps every text whole when they fit together", () => {
    const texts = ["a".repeat(5_000), "b".repeat(3_000), "short"];
    expect(shareBudget(texts, 10_000)).toEqual(texts);
  });

  it("keeps short texts whole and cuts the long ones to equal shares, saying so", () => {
    const texts = ["a".repeat(50_000), "short", "b".repeat(50_000)];
    const out = shareBudget(texts, 10_005);
    expect(out[1]).toBe("short");
    expect(out[0]!.startsWith("a".repeat(5_000))).toBe(true);
    expect(out[0]).toContain("[cut at 5000 of 50000 characters]");
    expect(out[2]).toContain("[cut at 5000 of 50000 characters]");
  });

  it("never cuts below the minimum share", () => {
    const out = shareBudget(["x".repeat(10_000), "y".repeat(10_000)], 100);
    expect(out[0]).toContain(`[cut at ${MIN_SHARE_CHARS} of 10000 characters]`);
  });
});
