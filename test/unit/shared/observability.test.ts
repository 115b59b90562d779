import { afterEach, describe, expect, it, vi } from "vitest";
import { countMetric, metrics } from "../../../shared/observability.js";

/** The EMF lines written while `fn` runs, parsed. */
function emfLinesOf(fn: () => void): any[] {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: any) => {
    lines.push(...String(chunk).split("\n").filter(Boolean));
    return true;
  });
  try {
    fn();
  } finally {
    spy.mockRestore();
  }
  return lines.map((line) => JSON.parse(line)).filter((line) => line._aws);
}

describe("metrics with dimensions of their own", () => {
  afterEach(() => {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  });

  it("publishes each call as its own EMF line, with only that call's dimensions", () => {
    const lines = emfLinesOf(() => {
      countMetric("ToolCalls", 1, { tool: "calculator" });
      countMetric("ToolErrors", 1, { tool: "web_fetch" });
      countMetric("ModelErrors", 1, { errorType: "RateLimitError" });
    });
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => [l.ToolCalls ?? l.ToolErrors ?? l.ModelErrors, l.tool ?? null, l.errorType ?? null])).toEqual([
      [1, "calculator", null],
      [1, "web_fetch", null],
      [1, null, "RateLimitError"],
    ]);
    // Each line declares its own dimension (and the service's), not the ones of the calls before it.
    expect(lines[2]._aws.CloudWatchMetrics[0].Dimensions).toEqual([["service", "errorType"]]);
    expect(lines[2]._aws.CloudWatchMetrics[0].Namespace).toBe("Stepwise");
  });

  it("keeps metrics without dimensions for the invocation's flush", () => {
    const during = emfLinesOf(() => countMetric("RunsStarted"));
    expect(during).toHaveLength(0);
    const flushed = emfLinesOf(() => metrics.publishStoredMetrics());
    expect(flushed).toHaveLength(1);
    expect(flushed[0].RunsStarted).toBe(1);
  });
});
