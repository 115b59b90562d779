// Summarizer role: a markdown answer that cites every task result it was given.

import { bulletLines, firstUserText, labelledText, lastUserText, oneLine } from "./conversation.js";
import { say, type ChatMessage, type Decision } from "./types.js";

export function summarize(messages: readonly ChatMessage[]): Decision {
  const userText = lastUserText(messages);
  const request = oneLine(labelledText(userText, "Request:") ?? firstUserText(messages));
  const results = bulletLines(userText);
  const files = labelledText(userText, "Files:");
  const lines = [
    `Answer to: ${request || "(no request was given)"}`,
    "",
    "Task results:",
    ...(results.length > 0 ? results : ["- (no task results were reported)"]),
  ];
  if (files) lines.push("", `Files: ${oneLine(files)}`);
  return say(lines.join("\n"));
}
