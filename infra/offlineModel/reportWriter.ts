// Report writer (write_report given a task): a report in Markdown made of what the request gives
// it, in its order: a summary line from the task, the notes as findings, each file of the material.

import { lastUserText, systemText } from "./conversation.js";
import { type ChatMessage, type Decision, say } from "./types.js";

/** write_report's writer says so in the first line of its instructions. */
export const isReportWriting = (messages: readonly ChatMessage[]) => /^You are a report writer\b/.test(systemText(messages));

export function writeReportText(messages: readonly ChatMessage[]): Decision {
  const request = lastUserText(messages);
  // The request is blocks separated by blank lines: "Title: …", "Task: …", "Notes:\n…", "Material: name\n…".
  const blocks = request.split(/\n\n(?=(?:Title|Task|Notes|Material):)/);
  const field = (label: string) =>
    blocks.filter((block) => block.startsWith(`${label}:`)).map((block) => block.slice(label.length + 1).replace(/^ /, ""));
  const task = field("Task")[0]?.trim() ?? "";
  const sections = [`## Summary\n\nThis report answers: ${task || "(no task was given)"}`];
  const notes = field("Notes")[0]?.trim();
  if (notes) sections.push(`## Findings\n\n${notes}`);
  for (const material of field("Material")) {
    const [name, ...body] = material.split("\n");
    // A document read as Markdown has its own '## ' headings (sheets, pages): one level down here.
    sections.push(`## From ${name.trim()}\n\n${body.join("\n").trim().replace(/^## /gm, "### ")}`);
  }
  return say(sections.join("\n\n"));
}
