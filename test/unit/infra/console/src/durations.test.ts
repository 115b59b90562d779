import { describe, expect, it } from "vitest";
import { axisTicks, seconds } from "../../../../../infra/console/src/durations.js";

describe("the run page's durations", () => {
  it("labels a short step's time axis in milliseconds, three different ticks in one unit", () => {
    expect(axisTicks(120)).toEqual(["0 ms", "60 ms", "120 ms"]);
    expect(axisTicks(3_400)).toEqual(["0 s", "1.7 s", "3.4 s"]);
    expect(axisTicks(42_000)).toEqual(["0 s", "21 s", "42 s"]);
  });

  it("writes a task's time under a second in milliseconds, never 0.0 s", () => {
    expect(seconds(40)).toBe("40 ms");
    expect(seconds(999.7)).toBe("1.0 s");
    expect(seconds(2_340)).toBe("2.3 s");
    expect(seconds(61_000)).toBe("61 s");
  });
});
