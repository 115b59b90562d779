import type { RunEvaluation } from "../../shared/contracts/evaluation.js";

/**
 * An online eval's result in words, the same in the console and the CLI: a headline (how many
 * judges passed, or why the run was not scored) and one line per judge.
 */
export function evaluationText(evaluation: RunEvaluation): { headline: string; judges: string[]; passed: boolean | undefined } {
  if (evaluation.status === "skipped") return { headline: `Not scored: ${evaluation.reason ?? "skipped"}`, judges: [], passed: undefined };
  const passed = evaluation.judges.filter((j) => j.passed).length;
  const tokens = evaluation.usage.promptTokens + evaluation.usage.completionTokens;
  const cost = evaluation.costUsd === null ? "" : `, $${evaluation.costUsd}`;
  return {
    headline: `Scored: ${passed} of ${evaluation.judges.length} judges passed (${tokens} tokens${cost})`,
    judges: evaluation.judges.map((j) => `${j.passed ? "✓" : "✗"} ${j.name} ${j.score.toFixed(2)}: ${j.reason}`),
    passed: evaluation.passed,
  };
}
