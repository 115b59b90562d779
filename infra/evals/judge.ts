/**
 * The LLM judge: an OpenAI-compatible model grades a run's answer against a rubric and replies with
 * a score from 0 to 1 and a reason. Any chat-completions endpoint serves (a real model, or the
 * offline model, which grades by the phrases a rubric quotes).
 */
import OpenAI from "openai";
import { z } from "zod";

export interface JudgeQuestion {
  input: string;
  answer: string;
  rubric: string;
}

export interface JudgeVerdict {
  score: number;
  reason: string;
  tokens: number;
}

export type Judge = (question: JudgeQuestion) => Promise<JudgeVerdict>;

export interface JudgeModel {
  baseUrl: string;
  apiKey?: string;
  model: string;
}

const Verdict = z.object({ score: z.number().min(0).max(1), reason: z.string() });

/** The judge's instructions: its first line is how the offline model knows it is judging. */
export const JUDGE_PROMPT = `You are an evaluator grading an AI agent's answer against a rubric.
Read the task, the answer and the rubric. Reply with one JSON object and nothing else:
{"score": <a number from 0 (fails the rubric) to 1 (meets all of it)>, "reason": "<one sentence saying why>"}`;

export function openAiJudge({ baseUrl, apiKey, model }: JudgeModel): Judge {
  const client = new OpenAI({ baseURL: baseUrl, apiKey: apiKey || "none", maxRetries: 2, timeout: 120_000 });
  return async ({ input, answer, rubric }) => {
    const completion = await client.chat.completions.create({
      model,
      temperature: 0,
      messages: [
        { role: "system", content: JUDGE_PROMPT },
        { role: "user", content: `Task:\n${input}\n\nAnswer:\n${answer}\n\nRubric:\n${rubric}` },
      ],
    });
    const text = completion.choices[0]?.message?.content ?? "";
    const tokens = completion.usage?.total_tokens ?? 0;
    const verdict = Verdict.safeParse(firstJsonObject(text));
    if (!verdict.success) throw new Error(`the judge's reply is not a verdict {score, reason}: ${text.slice(0, 200)}`);
    return { ...verdict.data, tokens };
  };
}

/** The first {...} object in a reply (models wrap JSON in prose or a code fence). */
function firstJsonObject(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end < start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}
