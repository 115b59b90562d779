/**
 * The LLM judge: an OpenAI-compatible model grades a run's answer against a rubric and replies with
 * a score from 0 to 1 and a reason. Any chat-completions endpoint serves (a real model, or the
 * offline model, which grades by the phrases a rubric quotes).
 */
import OpenAI from "openai";
import { JUDGE_PROMPT, judgeQuestion, parseJudgeReply } from "../../shared/contracts/evaluation.js";

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

export function openAiJudge({ baseUrl, apiKey, model }: JudgeModel): Judge {
  const client = new OpenAI({ baseURL: baseUrl, apiKey: apiKey || "none", maxRetries: 2, timeout: 120_000 });
  return async ({ input, answer, rubric }) => {
    const completion = await client.chat.completions.create({
      model,
      temperature: 0,
      messages: [
        { role: "system", content: JUDGE_PROMPT },
        { role: "user", content: judgeQuestion({ input, answer, rubric }) },
      ],
    });
    const text = completion.choices[0]?.message?.content ?? "";
    const tokens = completion.usage?.total_tokens ?? 0;
    const verdict = parseJudgeReply(text);
    if (!verdict) throw new Error(`the judge's reply is not a verdict {score, reason}: ${text.slice(0, 200)}`);
    return { ...verdict, tokens };
  };
}
