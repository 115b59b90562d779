/**
 * The eval report: per case, pass or fail with the reasons, the checks' scores, tokens, cost and
 * latency; a summary; written as JSON (the input of --compare), Markdown and HTML.
 */
import type { CheckResult } from "./checks.js";
import type { ActualCall } from "./trajectory.js";

export interface CaseResult {
  id: string;
  line: number;
  input: string;
  passed: boolean;
  /** The mean of the checks' scores (0 for a case that could not run). */
  score: number;
  /** Why it failed: each failed check's reason, or the problem that kept it from running. */
  reasons: string[];
  checks: CheckResult[];
  runId?: string;
  status?: string;
  answer?: string;
  toolCalls: ActualCall[];
  tokens: number;
  costUsd?: number;
  latencyMs?: number;
}

export interface EvalReport {
  reportVersion: 1;
  dataset: string;
  target: string;
  /** The LLM judge's model and endpoint. */
  judge: string;
  startedAt: string;
  endedAt: string;
  summary: { cases: number; passed: number; failed: number; score: number; tokens: number; costUsd: number; latencyMs: number };
  cases: CaseResult[];
}

export function summarize(cases: CaseResult[]): EvalReport["summary"] {
  const sum = (f: (c: CaseResult) => number) => cases.reduce((total, c) => total + f(c), 0);
  const passed = cases.filter((c) => c.passed).length;
  return {
    cases: cases.length,
    passed,
    failed: cases.length - passed,
    score: cases.length === 0 ? 0 : round(sum((c) => c.score) / cases.length),
    tokens: sum((c) => c.tokens),
    costUsd: round(
      sum((c) => c.costUsd ?? 0),
      6,
    ),
    latencyMs: sum((c) => c.latencyMs ?? 0),
  };
}

/** What changed from an earlier report, case by case (paired by id). */
export interface Comparison {
  newlyFailing: string[];
  newlyPassing: string[];
  added: string[];
  removed: string[];
  /** Cases in both whose score, cost or tokens changed. */
  changed: { id: string; score: number; costUsd: number; tokens: number; latencyMs: number }[];
  summary: { passed: number; score: number; costUsd: number; tokens: number };
}

export function compareReports(earlier: EvalReport, later: EvalReport): Comparison {
  const before = new Map(earlier.cases.map((c) => [c.id, c]));
  const after = new Map(later.cases.map((c) => [c.id, c]));
  const both = later.cases.filter((c) => before.has(c.id));
  const changed = both.flatMap((now) => {
    const then = before.get(now.id) as CaseResult;
    const delta = {
      id: now.id,
      score: round(now.score - then.score),
      costUsd: round((now.costUsd ?? 0) - (then.costUsd ?? 0), 6),
      tokens: now.tokens - then.tokens,
      latencyMs: (now.latencyMs ?? 0) - (then.latencyMs ?? 0),
    };
    return delta.score !== 0 || delta.costUsd !== 0 || delta.tokens !== 0 ? [delta] : [];
  });
  return {
    newlyFailing: both.filter((c) => !c.passed && before.get(c.id)?.passed).map((c) => c.id),
    newlyPassing: both.filter((c) => c.passed && !before.get(c.id)?.passed).map((c) => c.id),
    added: later.cases.filter((c) => !before.has(c.id)).map((c) => c.id),
    removed: earlier.cases.filter((c) => !after.has(c.id)).map((c) => c.id),
    changed,
    summary: {
      passed: later.summary.passed - earlier.summary.passed,
      score: round(later.summary.score - earlier.summary.score),
      costUsd: round(later.summary.costUsd - earlier.summary.costUsd, 6),
      tokens: later.summary.tokens - earlier.summary.tokens,
    },
  };
}

/** The report as a Markdown table, with the comparison when there is one. */
export function markdownReport(report: EvalReport, comparison?: Comparison): string {
  const { summary: s } = report;
  const lines = [
    `# Eval: ${report.dataset}`,
    "",
    `${s.passed} of ${s.cases} cases passed · mean score ${s.score} · ${s.tokens} tokens · ${money(s.costUsd)} · against ${report.target} · judge: ${report.judge}`,
    "",
    "| case | result | score | reasons | tools called | tokens | cost | latency |",
    "|---|---|---|---|---|---|---|---|",
    ...report.cases.map((c) => row(cellsOf(c))),
  ];
  if (comparison) lines.push("", ...markdownComparison(comparison));
  return `${lines.join("\n")}\n`;
}

function markdownComparison(c: Comparison): string[] {
  const list = (ids: string[]) => (ids.length === 0 ? "none" : ids.join(", "));
  const signed = (n: number, text = String(n)) => (n > 0 ? `+${text}` : text);
  return [
    "## Compared with the earlier report",
    "",
    `- newly failing: ${list(c.newlyFailing)}`,
    `- newly passing: ${list(c.newlyPassing)}`,
    `- added: ${list(c.added)}; removed: ${list(c.removed)}`,
    `- passed ${signed(c.summary.passed)}, mean score ${signed(c.summary.score)}, tokens ${signed(c.summary.tokens)}, cost ${signed(c.summary.costUsd, money(c.summary.costUsd))}`,
    ...(c.changed.length === 0
      ? []
      : [
          "",
          "| case | score | tokens | cost | latency |",
          "|---|---|---|---|---|",
          ...c.changed.map((d) =>
            row([d.id, signed(d.score), signed(d.tokens), signed(d.costUsd, money(d.costUsd)), signed(d.latencyMs, `${d.latencyMs} ms`)]),
          ),
        ]),
  ];
}

/** The same table as a page of its own (no script, no outside resources). */
export function htmlReport(report: EvalReport, comparison?: Comparison): string {
  const { summary: s } = report;
  const cells = (c: CaseResult) =>
    cellsOf(c)
      .map((text) => `<td>${escapeHtml(text)}</td>`)
      .join("");
  const changes = comparison
    ? `<h2>Compared with the earlier report</h2><ul><li>newly failing: ${escapeHtml(comparison.newlyFailing.join(", ") || "none")}</li><li>newly passing: ${escapeHtml(comparison.newlyPassing.join(", ") || "none")}</li></ul>`
    : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Eval: ${escapeHtml(report.dataset)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .5rem;vertical-align:top;white-space:pre-wrap}tr.fail td:nth-child(2){color:#b00;font-weight:bold}</style>
</head><body><h1>Eval: ${escapeHtml(report.dataset)}</h1>
<p>${s.passed} of ${s.cases} cases passed · mean score ${s.score} · ${s.tokens} tokens · ${money(s.costUsd)} · against ${escapeHtml(report.target)} · judge: ${escapeHtml(report.judge)}</p>
<table><thead><tr><th>case</th><th>result</th><th>score</th><th>reasons</th><th>tools called</th><th>tokens</th><th>cost</th><th>latency</th></tr></thead><tbody>
${report.cases.map((c) => `<tr class="${c.passed ? "pass" : "fail"}">${cells(c)}</tr>`).join("\n")}
</tbody></table>${changes}</body></html>
`;
}

/** A case's cells in the table: case, result, score, reasons, tools called, tokens, cost, latency. */
function cellsOf(c: CaseResult): string[] {
  return [
    c.id,
    c.passed ? "pass" : "FAIL",
    String(c.score),
    c.reasons.join("; ") || "—",
    c.toolCalls.map((t) => t.tool).join(", ") || "—",
    String(c.tokens),
    c.costUsd === undefined ? "—" : money(c.costUsd),
    c.latencyMs === undefined ? "—" : `${(c.latencyMs / 1000).toFixed(1)} s`,
  ];
}

const row = (cells: string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, "\\|").replace(/\n/g, " ")).join(" | ")} |`;
const money = (usd: number) => `$${usd.toFixed(4)}`;
const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;
const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] ?? ch);
