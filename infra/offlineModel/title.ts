// Session title: the first words of the request it names (its first sentence, at most six words),
// so the sessions list shows what each conversation is about. Only the request is read.

import { cut, labelledText, lastUserText, oneLine, systemText } from "./conversation.js";
import { type ChatMessage, type Decision, say } from "./types.js";

const MAX_WORDS = 6;
/** A script without spaces between words (Chinese, Japanese, Thai) is cut at this many characters. */
const MAX_UNSPACED_CHARS = 16;

/** The title call says what it wants in the first line of its instructions. */
export const isTitling = (messages: readonly ChatMessage[]) => /^You name conversations\b/.test(systemText(messages));

export function writeTitle(messages: readonly ChatMessage[]): Decision {
  const request = oneLine(labelledText(lastUserText(messages), "Request:") ?? "");
  const sentence = request.split(/(?<=[.?!])\s|[。？！\n]/)[0] ?? "";
  const words = sentence.split(" ").filter(Boolean).slice(0, MAX_WORDS);
  const text = words.length === 1 ? cut(words[0], MAX_UNSPACED_CHARS) : words.join(" ");
  const title = text.replace(/[\s.,;:!?。，；：！？]+$/, "");
  return say(title ? title.charAt(0).toUpperCase() + title.slice(1) : "Untitled request");
}
