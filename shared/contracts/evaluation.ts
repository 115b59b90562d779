/**
 * Judging a run's answer against a rubric: the judge's instructions and reply (shared by
 * `npm run eval` and the online evals of production runs), the tenant's online-eval setting, and
 * what a run's scoring records (`eval.scored`).
 */
import * as z from "zod";

/** The judge's instructions: their first line is how the offline model knows it is judging. */
export const JUDGE_PROMPT = `You are an evaluator grading an AI agent's answer against a rubric.
Read the task, the answer and the rubric. Reply with one JSON object and nothing else:
{"score": <a number from 0 (fails the rubric) to 1 (meets all of it)>, "reason": "<one sentence saying why>"}`;

/** The user message the judge reads: the task, the answer, the rubric (the offline judge reads these headings). */
export const judgeQuestion = ({ input, answer, rubric }: { input: string; answer: string; rubric: string }) =>
  `Task:\n${input}\n\nAnswer:\n${answer}\n\nRubric:\n${rubric}`;

const Verdict = z.object({ score: z.number().min(0).max(1), reason: z.string() });
export type JudgeReply = z.infer<typeof Verdict>;

/** The judge's verdict in its reply (models wrap JSON in prose or a code fence); undefined if there is none. */
export function parseJudgeReply(text: string): JudgeReply | undefined {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end < start) return undefined;
  try {
    const verdict = Verdict.safeParse(JSON.parse(text.slice(start, end + 1)));
    return verdict.success ? verdict.data : undefined;
  } catch {
    return undefined;
  }
}

/** One judge of the online evals: its name, its rubric, and the score at or above which a run passes. */
export const OnlineJudge = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "1 to 64 letters, digits, '_' or '-'"),
  rubric: z.string().trim().min(1).max(4_000),
  threshold: z.number().min(0).max(1).default(0.5),
});

/** `onlineEvals` of `PUT /v1/settings`: a sampled share of the tenant's succeeded runs, judged after they end. */
export const OnlineEvals = z.strictObject({
  /** The share of succeeded runs scored, from 0 (none) to 1 (all). */
  sampleRate: z.number().min(0).max(1),
  judges: z
    .array(OnlineJudge)
    .min(1)
    .max(5)
    .refine((judges) => new Set(judges.map((j) => j.name)).size === judges.length, "judge names must differ"),
  /** What judging may cost per UTC day, in USD; once spent, sampled runs are not scored (and say so). */
  dailyCostCapUsd: z.number().positive().max(100_000),
});
export type OnlineEvals = z.infer<typeof OnlineEvals>;

/** What scoring a run found: each judge's score, or why it was not scored; the judge's tokens and cost. */
export const RunEvaluation = z.object({
  status: z.enum(["scored", "skipped"]),
  /** Why it was skipped (the day's cost cap reached, the model has no price). */
  reason: z.string().optional(),
  judges: z.array(z.object({ name: z.string(), score: z.number(), passed: z.boolean(), reason: z.string() })),
  /** Whether every judge passed it (absent when skipped). */
  passed: z.boolean().optional(),
  usage: z.object({ promptTokens: z.number().int(), completionTokens: z.number().int() }),
  /** Estimated from the model's price; null when skipped before judging. */
  costUsd: z.number().nullable(),
  at: z.string(),
});
export type RunEvaluation = z.infer<typeof RunEvaluation>;
