import { createHash } from "node:crypto";
import type { ChatMessage, ToolSpec } from "../llm/types.js";

/**
 * A model request as a short fingerprint, journaled with the reply, so a replay can tell whether the
 * code under replay asks the same: one digest for the tools offered, then one per message, so the
 * first message that differs can be named. Nine characters a message keep the journal small.
 */
export function requestFingerprint(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): string {
  return [digest(JSON.stringify(tools)), ...messages.map((m) => digest(`${m.role}\n${textOf(m)}`))].join(".");
}

/**
 * The first message of `messages` whose digest is not the recorded one (undefined when only the
 * tools differ); with nothing recorded, the last message (what the call was about).
 */
export function firstDifferentMessage(
  recorded: string | undefined,
  messages: readonly ChatMessage[],
): { index: number; role: string; text: string } | undefined {
  const digests = recorded ? recorded.split(".").slice(1) : messages.slice(0, -1).map((m) => digest(`${m.role}\n${textOf(m)}`));
  const index = messages.findIndex((m, i) => digests[i] !== digest(`${m.role}\n${textOf(m)}`));
  if (index < 0) return undefined;
  return { index, role: messages[index].role, text: textOf(messages[index]).slice(0, 4_000) };
}

const digest = (text: string) => createHash("sha256").update(text).digest("base64url").slice(0, 8);

/**
 * A system prompt's state of the run: from its date on (the date, the run's files, the plan: prompts
 * put what changes last). The date changes by itself, and the files are what write tools made,
 * which a replay does not make again: the code's prompt is what comes before.
 */
const RUN_STATE = /\n\nToday is \d{4}-\d{2}-\d{2}\.[\s\S]*$/;

/** What a message says, for its digest: its text and tool calls (a system prompt without the run's state). */
function textOf(message: ChatMessage): string {
  const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? "");
  const calls = "tool_calls" in message && message.tool_calls ? JSON.stringify(message.tool_calls) : "";
  return `${message.role === "system" ? content.replace(RUN_STATE, "") : content}${calls}`;
}
