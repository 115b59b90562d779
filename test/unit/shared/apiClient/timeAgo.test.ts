import { describe, expect, it } from "vitest";
import { timeAgo } from "../../../../shared/apiClient/timeAgo.js";

describe("timeAgo", () => {
  const now = Date.parse("2026-01-02T00:00:00.000Z");
  it.each([
    ["2026-01-01T23:59:18.000Z", "42s ago"],
    ["2026-01-01T23:55:00.000Z", "5m ago"],
    ["2026-01-01T21:00:00.000Z", "3h ago"],
    ["2025-12-31T00:00:00.000Z", "2d ago"],
    // A clock a little ahead of ours is not "in the future".
    ["2026-01-02T00:00:03.000Z", "0s ago"],
  ])("%s is %s", (iso, expected) => {
    expect(timeAgo(iso, now)).toBe(expected);
  });
});
