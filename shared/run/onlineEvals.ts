/**
 * Online evals: a sampled share of a tenant's succeeded runs is scored by the tenant's judges after
 * the run ended, within a daily cost cap. The notifier queues a sampled run's scoring when its
 * execution ends (the same queue as webhooks: the run's end waits for no judge, and a judge that
 * fails is retried alone, without sending webhooks again); scoring writes `eval.scored` after the
 * run's end and the scores on the run record.
 */
import { createHash } from "node:crypto";
import { JUDGE_PROMPT, judgeQuestion, type OnlineEvals, parseJudgeReply, type RunEvaluation } from "../contracts/evaluation.js";
import type { RunRecord } from "../contracts/run.js";
import { countMetric } from "../observability.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import { estimatedCostUsd } from "../views/cost.js";

export type OnlineEvalPorts = Pick<Ports, "runs" | "events" | "tenantSettings" | "evalSpend" | "model" | "notifyQueue"> &
  SettingsOf<"model" | "prices">;

/** Whether a run is in the sampled share: from a hash of its id, so a message handled twice decides the same way. */
export function isSampled(runId: string, sampleRate: number): boolean {
  if (sampleRate <= 0) return false;
  const hash = createHash("sha256").update(runId).digest().readUInt32BE(0);
  return hash / 2 ** 32 < sampleRate;
}

/** Only a run that answered is judged; a replay repeats a recorded run (it is not production traffic). */
const judgeable = (run: RunRecord) => run.status === "succeeded" && !run.replayOf && !run.evaluation;

/** A run ended: when its tenant scores online and the run is sampled, its scoring is queued. */
export async function queueScoring(ports: Pick<OnlineEvalPorts, "tenantSettings" | "notifyQueue">, run: RunRecord): Promise<boolean> {
  if (!judgeable(run)) return false;
  const { onlineEvals } = await ports.tenantSettings.get(run.tenantId);
  if (!onlineEvals || !isSampled(run.runId, onlineEvals.sampleRate)) return false;
  await ports.notifyQueue.send({ kind: "score", runId: run.runId });
  return true;
}

/**
 * Scores a run with each of the tenant's judges, unless the day's cost cap is reached (the run then
 * says it was skipped and why). Once per run: a run already scored is left as it is.
 */
export async function scoreRun(ports: OnlineEvalPorts, runId: string, now = new Date()): Promise<RunEvaluation | undefined> {
  const run = await ports.runs.get(runId);
  if (!run || !judgeable(run)) return undefined;
  const { onlineEvals } = await ports.tenantSettings.get(run.tenantId);
  if (!onlineEvals) return undefined; // turned off since the run was queued
  const day = now.toISOString().slice(0, 10);
  const reason = await reasonToSkip(ports, run.tenantId, day, onlineEvals);
  const evaluation = reason ? skipped(reason, now) : await judge(ports, run, onlineEvals, day, now);
  await record(ports, run.runId, evaluation);
  countMetric(evaluation.status === "scored" ? "RunsScored" : "RunsNotScored");
  return evaluation;
}

/** Why the run cannot be judged today: the cap is reached, or the judge has no price to count against it. */
async function reasonToSkip(ports: OnlineEvalPorts, tenantId: string, day: string, evals: OnlineEvals): Promise<string | undefined> {
  if (estimatedCostUsd({ promptTokens: 1, completionTokens: 1, llmCalls: 1, toolCalls: 0 }, undefined, ports.settings) === undefined)
    return `the model ${ports.settings.model.name} has no price (MODEL_PRICE_INPUT_PER_MTOK, MODEL_PRICE_OUTPUT_PER_MTOK or MODEL_PRICES), so the judging's daily cost cap cannot be kept`;
  const spent = await ports.evalSpend.spent(tenantId, day);
  if (spent >= evals.dailyCostCapUsd)
    return `the daily cost cap for judging is reached ($${round(spent)} of $${evals.dailyCostCapUsd} spent on ${day} UTC)`;
  return undefined;
}

const skipped = (reason: string, now: Date): RunEvaluation => ({
  status: "skipped",
  reason,
  judges: [],
  usage: { promptTokens: 0, completionTokens: 0 },
  costUsd: null,
  at: now.toISOString(),
});

/** Each judge grades the run's answer in turn; what they cost is added to the day's spend, also when one fails. */
async function judge(ports: OnlineEvalPorts, run: RunRecord, evals: OnlineEvals, day: string, now: Date): Promise<RunEvaluation> {
  const usage = { promptTokens: 0, completionTokens: 0 };
  const judges: RunEvaluation["judges"] = [];
  const costOf = () => estimatedCostUsd({ ...usage, llmCalls: judges.length, toolCalls: 0 }, undefined, ports.settings) ?? 0;
  try {
    for (const { name, rubric, threshold } of evals.judges) {
      const response = await ports.model.complete({
        role: "router",
        messages: [
          { role: "system", content: JUDGE_PROMPT },
          { role: "user", content: judgeQuestion({ input: run.input, answer: run.result ?? "", rubric }) },
        ],
      });
      usage.promptTokens += response.usage.promptTokens;
      usage.completionTokens += response.usage.completionTokens;
      const verdict = parseJudgeReply(response.content ?? "");
      judges.push(
        verdict
          ? { name, score: verdict.score, passed: verdict.score >= threshold, reason: verdict.reason }
          : {
              name,
              score: 0,
              passed: false,
              reason: `the judge's reply is not a verdict {score, reason}: ${(response.content ?? "").slice(0, 200)}`,
            },
      );
    }
  } finally {
    if (usage.promptTokens + usage.completionTokens > 0) await ports.evalSpend.add(run.tenantId, day, costOf());
  }
  return { status: "scored", judges, passed: judges.every((j) => j.passed), usage, costUsd: round(costOf()), at: now.toISOString() };
}

/** The scores on the run: one `eval.scored` after its end (the log stays closed), and on its record for its view. */
async function record(ports: OnlineEvalPorts, runId: string, evaluation: RunEvaluation): Promise<void> {
  await ports.events.append(runId, [{ type: "eval.scored", data: evaluation }], { reopen: true, close: true, key: "eval.scored" });
  await ports.runs.update(runId, { evaluation }, ["succeeded"]);
}

const round = (usd: number) => Math.round(usd * 1_000_000) / 1_000_000;
