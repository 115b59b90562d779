import { describe, expect, it } from "vitest";
import { type CaseResult, compareReports, type EvalReport, htmlReport, markdownReport, summarize } from "../../../../infra/evals/report.js";

const result = (id: string, passed: boolean, extra: Partial<CaseResult> = {}): CaseResult => ({
  id,
  line: 1,
  input: id,
  passed,
  score: passed ? 1 : 0.5,
  reasons: passed ? [] : [`${id} failed | badly`],
  checks: [],
  toolCalls: [{ tool: "calculator", arguments: {} }],
  tokens: 100,
  costUsd: 0.001,
  latencyMs: 2000,
  ...extra,
});
const report = (cases: CaseResult[]): EvalReport => ({
  reportVersion: 1,
  dataset: "walkthroughs.jsonl",
  target: "http://127.0.0.1:3000",
  judge: "the offline model",
  startedAt: "2026-11-28T00:00:00.000Z",
  endedAt: "2026-11-28T00:01:00.000Z",
  summary: summarize(cases),
  cases,
});

describe("eval reports", () => {
  it("sums the cases: passed, failed, mean score, tokens, cost", () => {
    expect(summarize([result("a", true), result("b", false)])).toEqual({
      cases: 2,
      passed: 1,
      failed: 1,
      score: 0.75,
      tokens: 200,
      costUsd: 0.002,
      latencyMs: 4000,
    });
  });

  it("compare: newly failing, newly passing, added, removed, and the score, token and cost deltas", () => {
    const earlier = report([result("steady", true), result("breaks", true), result("mends", false), result("gone", true)]);
    const later = report([
      result("steady", true),
      result("breaks", false, { tokens: 150, costUsd: 0.0015 }),
      result("mends", true),
      result("new", true),
    ]);
    const comparison = compareReports(earlier, later);
    expect(comparison).toMatchObject({ newlyFailing: ["breaks"], newlyPassing: ["mends"], added: ["new"], removed: ["gone"] });
    expect(comparison.changed).toEqual([
      { id: "breaks", score: -0.5, costUsd: 0.0005, tokens: 50, latencyMs: 0 },
      { id: "mends", score: 0.5, costUsd: 0, tokens: 0, latencyMs: 0 },
    ]);
    expect(comparison.summary).toEqual({ passed: 0, score: 0, costUsd: 0.0005, tokens: 50 });
    const markdown = markdownReport(later, comparison);
    expect(markdown).toContain("- newly failing: breaks");
    expect(markdown).toContain("- newly passing: mends");
    expect(markdown).toContain("| breaks | -0.5 | +50 | +$0.0005 | 0 ms |");
  });

  it("writes one table row per case with the reasons, the tools called, tokens, cost and latency (pipes escaped)", () => {
    const markdown = markdownReport(report([result("a", true), result("b", false, { costUsd: undefined })]));
    expect(markdown).toContain("1 of 2 cases passed");
    expect(markdown).toContain("| a | pass | 1 | — | calculator | 100 | $0.0010 | 2.0 s |");
    expect(markdown).toContain("| b | FAIL | 0.5 | b failed \\| badly | calculator | 100 | — | 2.0 s |");
  });

  it("the HTML page escapes what the cases hold", () => {
    const html = htmlReport(report([result("<script>alert(1)</script>", false)]));
    expect(html).not.toContain("<script>alert");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });
});
