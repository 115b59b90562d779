// Summarizer role: a markdown answer that cites every task result it was given, whole (a result
// may span lines: a table of figures), and the files those results name (a task's own files follow
// its title), not every file of the run.

import { firstUserText, labelledText, lastUserText, oneLine } from "./conversation.js";
import { type ChatMessage, type Decision, say } from "./types.js";

export function summarize(messages: readonly ChatMessage[]): Decision {
  const userText = lastUserText(messages);
  const request = oneLine(labelledText(userText, "Request:") ?? firstUserText(messages));
  const results = taskResults(userText);
  const files = (labelledText(userText, "Files:") ?? "").split(",").map((name) => name.trim());
  const quoted = results.join("\n");
  const cited = files.filter((name) => name && quoted.includes(name));
  const lines = [
    `Answer to: ${request || "(no request was given)"}`,
    "",
    "Task results:",
    ...(results.length > 0 ? results : ["- (no task results were reported)"]),
  ];
  if (cited.length > 0) lines.push("", `Files: ${cited.join(", ")}`);
  return say(lines.join("\n"));
}

/**
 * Each task's result whole, as the summarizer was given it (a result's figures, tables and lists
 * follow its bullet on lines of their own): the lines after "Task results:", up to "Files:".
 */
function taskResults(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((line) => line.trim() === "Task results:");
  if (start < 0) return [];
  const end = lines.findIndex((line, i) => i > start && /^Files:/.test(line));
  const block = lines.slice(start + 1, end < 0 ? undefined : end);
  while (block.at(-1)?.trim() === "") block.pop();
  return block.some((line) => line.startsWith("- ")) ? block : [];
}
