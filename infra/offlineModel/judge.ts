// The judge of an eval (`npm run eval`): it grades an answer against a rubric. Not reasoning, it
// scores the share of the phrases the rubric quotes that the answer contains, so a rubric such as
// `The answer gives "391" and "47"` is graded the same way every time.

import { lastUserText, systemText } from "./conversation.js";
import { type ChatMessage, type Decision, say } from "./types.js";

/** The judge's instructions say what it is in their first line. */
export const isJudging = (messages: readonly ChatMessage[]) => /^You are an evaluator grading\b/.test(systemText(messages));

export function judge(messages: readonly ChatMessage[]): Decision {
  const request = lastUserText(messages);
  const answer = section(request, "Answer", "Rubric").toLowerCase();
  const rubric = request.slice(request.lastIndexOf("\nRubric:\n") + "\nRubric:\n".length);
  const phrases = [...rubric.matchAll(/"([^"]+)"|“([^”]+)”/g)].map((m) => (m[1] ?? m[2]) as string);
  if (phrases.length === 0) {
    return verdict(1, "The offline judge grades only the phrases a rubric quotes, and this rubric quotes none.");
  }
  const missing = phrases.filter((phrase) => !answer.includes(phrase.toLowerCase()));
  const score = (phrases.length - missing.length) / phrases.length;
  const reason =
    missing.length === 0
      ? `The answer has every phrase the rubric asks for (${phrases.map((p) => `"${p}"`).join(", ")}).`
      : `The answer lacks ${missing.map((p) => `"${p}"`).join(", ")}.`;
  return verdict(score, reason);
}

/** The text between "Name:" and the next "Next:" heading line. */
function section(text: string, name: string, next: string): string {
  const start = text.indexOf(`${name}:\n`);
  const end = text.lastIndexOf(`\n${next}:\n`);
  return start === -1 ? "" : text.slice(start + name.length + 2, end > start ? end : undefined);
}

const verdict = (score: number, reason: string) => say(JSON.stringify({ score: Math.round(score * 1000) / 1000, reason }));
