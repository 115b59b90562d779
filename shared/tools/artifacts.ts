import { z } from "zod";
import { readableText } from "../documents/documents.js";
import { defineTool } from "./tool.js";

const filename = z
  .string()
  .min(1)
  .max(120)
  .regex(/^[\w][\w.-]*$/, "a plain file name: letters, digits, '.', '-', '_'");

/** JD Genie's file tool, split by access so that writing can require approval. */
export const writeArtifact = defineTool({
  name: "write_artifact",
  persona: "Report writer",
  description: "Save a file (markdown, text, csv, json) as a result of the run. Overwrites a file of the same name.",
  access: "write",
  grants: ["files:write"],
  parameters: z.object({ filename, content: z.string().max(300_000), description: z.string().max(500).optional() }),
  async run({ filename, content, description }, { runId, files, idempotencyKey }) {
    // Once per call: a retry after a crash finds the file its key wrote.
    const saved = await files.put(runId, filename, content, { description, idempotencyKey });
    return `Saved ${saved.name} (${saved.bytes} bytes).`;
  },
});

/** One read at most: with its closing line it stays under what the model is shown of a tool output (10,000). */
const MAX_READ_CHARS = 9_000;

export const readArtifact = defineTool({
  name: "read_artifact",
  persona: "Researcher",
  description:
    `Read a file of this run: ${MAX_READ_CHARS} characters at most per call, from \`offset\` (0 first); a longer file is read on from where the last read stopped. ` +
    "Spreadsheets (.xlsx, .xls, .csv), Word documents (.docx) and PDFs are read as Markdown: each sheet a table under its name (a CSV file one table), a PDF's text by page.",
  access: "read",
  grants: ["files:read"],
  parameters: z.object({
    filename,
    offset: z.number().int().min(0).optional().describe("the first character to read (default 0)"),
    length: z.number().int().min(1).max(MAX_READ_CHARS).optional().describe(`how many characters (default and at most ${MAX_READ_CHARS})`),
  }),
  async run({ filename, offset = 0, length = MAX_READ_CHARS }, { runId, files }) {
    const file = await files.get(runId, filename);
    if (!file) {
      const names = (await files.list(runId)).map((a) => a.name);
      return `Error: no file named ${filename}. Files: ${names.join(", ") || "none"}.`;
    }
    const content = await readableText(runId, file);
    if (offset === 0 && content.length <= length) return content;
    if (offset >= content.length) return `Error: ${filename} has ${content.length} characters; offset ${offset} is past its end.`;
    const end = Math.min(content.length, offset + length);
    const next =
      end < content.length ? ` Read on with read_artifact {"filename": "${filename}", "offset": ${end}}.` : " That is the end of the file.";
    return `${content.slice(offset, end)}\n[characters ${offset}–${end} of ${content.length}.${next}]`;
  },
});
