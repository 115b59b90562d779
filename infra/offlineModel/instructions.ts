// The operator's instructions (the block the prompt heads "Instructions from the operator"), honoured
// where the offline model can show it without reasoning: a text to start or end every answer with,
// and an answer language, whose name for "Answer" heads the reply (the offline model cannot translate).

import { systemText } from "./conversation.js";
import type { ChatMessage, Decision } from "./types.js";

const HEADING = /^Instructions from the operator\b.*:\s*$/m;

/** The answer's label in the languages an instruction may ask for. */
const ANSWER_LABELS: Record<string, string> = {
  english: "Answer:",
  french: "Réponse :",
  german: "Antwort:",
  spanish: "Respuesta:",
  italian: "Risposta:",
  portuguese: "Resposta:",
  chinese: "回答：",
  japanese: "回答：",
};

/** The text in double quotes (straight or curly), so an apostrophe inside it stays. */
const QUOTED = `(?:"([^"]+)"|“([^”]+)”)`;
const WHAT = String.raw`(?:every|each|all|your|the)?\s*(?:answers?|repl(?:y|ies)|responses?|messages?)`;
const START_WITH = new RegExp(String.raw`\b(?:start|begin|open)\s+${WHAT}\s+with\s+${QUOTED}`, "i");
const END_WITH = new RegExp(String.raw`\b(?:end|finish|close|sign)\s+${WHAT}\s+with\s+${QUOTED}`, "i");
const LANGUAGE = new RegExp(
  String.raw`\b(?:answer|reply|respond|write)\s+(?:only\s+)?in\s+(${Object.keys(ANSWER_LABELS).join("|")})\b`,
  "i",
);

/** The operator's instructions in the system prompt: the lines after their heading, up to the date line. */
export function operatorInstructions(messages: readonly ChatMessage[]): string {
  const system = systemText(messages);
  const heading = HEADING.exec(system);
  if (!heading) return "";
  const rest = system.slice(heading.index + heading[0].length);
  return rest.split(/\n\nToday is /)[0].trim();
}

/** A final text as the operator's instructions want it; tool calls and texts without instructions are left as they are. */
export function honourInstructions(messages: readonly ChatMessage[], decision: Decision): Decision {
  const instructions = operatorInstructions(messages);
  if (!instructions || decision.content === null || decision.calls.length > 0) return decision;
  let text = decision.content;
  const language = LANGUAGE.exec(instructions)?.[1]?.toLowerCase();
  if (language && language !== "english") text = `${ANSWER_LABELS[language]}\n\n${text}`;
  const start = quoted(START_WITH.exec(instructions));
  if (start && !text.startsWith(start)) text = `${start}\n\n${text}`;
  const end = quoted(END_WITH.exec(instructions));
  if (end && !text.trimEnd().endsWith(end)) text = `${text.trimEnd()}\n\n${end}`;
  return { ...decision, content: text };
}

const quoted = (match: RegExpExecArray | null) => match?.[1] ?? match?.[2];
