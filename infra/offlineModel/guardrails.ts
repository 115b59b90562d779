// Guardrails, played deterministically: `/v1/moderations` flags a fixed list of words, and a
// guardrail judge fails a text that contains a word its rubric quotes. Only the request is read.

import { z } from "zod";
import { lastUserText, systemText } from "./conversation.js";
import { type ApiError, invalidRequest } from "./protocol.js";
import { type ChatMessage, type Decision, say } from "./types.js";

/** The words the offline moderation flags, whole and in any case, with the category each falls under. */
export const FLAGGED_WORDS: Readonly<Record<string, string>> = {
  bomb: "violence",
  massacre: "violence",
  bioweapon: "illicit/violent",
  genocide: "hate",
  suicide: "self-harm",
};

/** OpenAI's moderation categories: every result names each of them. */
const CATEGORIES = [
  "harassment",
  "harassment/threatening",
  "hate",
  "hate/threatening",
  "illicit",
  "illicit/violent",
  "self-harm",
  "self-harm/intent",
  "self-harm/instructions",
  "sexual",
  "sexual/minors",
  "violence",
  "violence/graphic",
];

const ModerationRequest = z.looseObject({
  input: z.union([z.string(), z.array(z.union([z.string(), z.looseObject({ type: z.string(), text: z.string().optional() })])).min(1)]),
  model: z.string().optional(),
});

/** The body of a `/v1/moderations` answer (or the error OpenAI would give), one result per input. */
export function moderate(body: unknown, id: string): { status: number; body: object } {
  if (typeof body !== "object" || body === null || !("input" in body)) {
    const error: ApiError = invalidRequest("Missing required parameter: 'input'.", "input", "missing_required_parameter");
    return { status: 400, body: error };
  }
  const parsed = ModerationRequest.safeParse(body);
  if (!parsed.success)
    return { status: 400, body: invalidRequest(`Invalid value for 'input': ${parsed.error.issues[0]?.message}`, "input") };
  const { input, model } = parsed.data;
  const texts = typeof input === "string" ? [input] : input.map((part) => (typeof part === "string" ? part : (part.text ?? "")));
  return { status: 200, body: { id, model: model ?? "omni-moderation-latest", results: texts.map(resultOf) } };
}

function resultOf(text: string) {
  const words = new Set(text.toLowerCase().match(/[a-z-]+/g) ?? []);
  const hits = new Set(Object.entries(FLAGGED_WORDS).flatMap(([word, category]) => (words.has(word) ? [category] : [])));
  const categories = Object.fromEntries(CATEGORIES.map((c) => [c, hits.has(c)]));
  const scores = Object.fromEntries(CATEGORIES.map((c) => [c, hits.has(c) ? 0.97 : 0.0001]));
  const applied = Object.fromEntries(CATEGORIES.map((c) => [c, hits.has(c) ? ["text"] : []]));
  return { flagged: hits.size > 0, categories, category_scores: scores, category_applied_input_types: applied };
}

/** A guardrail judge's request starts its instructions so (shared/guardrails/judge.ts). */
export const isGuardrailJudging = (messages: readonly ChatMessage[]) => /^You are a guardrail judge\b/.test(systemText(messages));

/** Fails the text when it holds a word the rubric quotes ("never mention "Project X""), else passes. */
export function judgeGuardrail(messages: readonly ChatMessage[]): Decision {
  const rubric = systemText(messages).match(/^Rubric: (.*)$/m)?.[1] ?? "";
  const text = (lastUserText(messages).match(/<text>\n?([\s\S]*?)\n?<\/text>/)?.[1] ?? "").toLowerCase();
  const quoted = [...rubric.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  const broken = quoted.find((word) => text.includes(word.toLowerCase()));
  return say(JSON.stringify(broken ? { verdict: "fail", reason: `the text mentions "${broken}"` } : { verdict: "pass" }));
}
