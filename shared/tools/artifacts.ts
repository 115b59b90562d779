import * as z from "zod";
import { documentKind, readableText } from "../documents/documents.js";
import type { FileMeta, FileStore } from "../ports/files.js";
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
  // Puts its file with the call's idempotency key: a second run of the call writes nothing new.
  idempotent: true,
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
/**
 * A text file up to this size is read whole and counted in characters; a larger one is read by S3
 * Range, only the slice asked for, and counted in bytes (an agent function never holds the file).
 */
export const WHOLE_TEXT_BYTES = 1024 * 1024;
/** Documents (spreadsheets, Word, PDF) are converted whole: up to this size, within an agent function's memory (agentMemoryMb). */
export const MAX_DOCUMENT_BYTES = 32 * 1024 * 1024;

export const readArtifact = defineTool({
  name: "read_artifact",
  persona: "Researcher",
  description:
    `Read a file of this run: ${MAX_READ_CHARS} characters at most per call, from \`offset\` (0 first); a longer file is read on from where the last read stopped. ` +
    `In a text file over ${WHOLE_TEXT_BYTES / 1024 / 1024} MB, \`offset\` counts bytes (the file's size and each read's range are shown). ` +
    "Spreadsheets (.xlsx, .xls, .csv), Word documents (.docx) and PDFs are read as Markdown: each sheet a table under its name (a CSV file one table), a PDF's text by page.",
  access: "read",
  grants: ["files:read"],
  parameters: z.object({
    filename,
    offset: z.number().int().min(0).optional().describe("the first character to read (default 0)"),
    length: z.number().int().min(1).max(MAX_READ_CHARS).optional().describe(`how many characters (default and at most ${MAX_READ_CHARS})`),
  }),
  async run({ filename, offset = 0, length = MAX_READ_CHARS }, { runId, files }) {
    // The size first: a big file is never downloaded whole.
    const listed = await files.list(runId);
    const meta = listed.find((f) => f.name === filename);
    if (!meta) return `Error: no file named ${filename}. Files: ${listed.map((a) => a.name).join(", ") || "none"}.`;
    const document = documentKind(filename) !== undefined;
    if (document && meta.bytes > MAX_DOCUMENT_BYTES)
      return `Error: ${filename} is ${meta.bytes} bytes; documents are converted whole, up to ${MAX_DOCUMENT_BYTES} bytes.`;
    if (!document && meta.bytes > WHOLE_TEXT_BYTES) return readSlice(files, runId, meta, offset, length);
    const file = await files.get(runId, filename);
    if (!file) return `Error: no file named ${filename}.`;
    const content = await readableText(runId, file);
    if (offset === 0 && content.length <= length) return content;
    if (offset >= content.length) return `Error: ${filename} has ${content.length} characters; offset ${offset} is past its end.`;
    const end = Math.min(content.length, offset + length);
    const next =
      end < content.length ? ` Read on with read_artifact {"filename": "${filename}", "offset": ${end}}.` : " That is the end of the file.";
    return `${content.slice(offset, end)}\n[characters ${offset}–${end} of ${content.length}.${next}]`;
  },
});

/**
 * `length` characters of a big text file from byte `offset`, read by range: a character cut by the
 * range's start is skipped, one cut by its end is left for the next read.
 */
async function readSlice(files: FileStore, runId: string, meta: FileMeta, offset: number, length: number): Promise<string> {
  if (offset >= meta.bytes) return `Error: ${meta.name} has ${meta.bytes} bytes; offset ${offset} is past its end.`;
  const read = await files.getRange(runId, meta.name, offset, offset + length * 4);
  if (!read) return `Error: no file named ${meta.name}.`;
  // UTF-8 continuation bytes (10xxxxxx) belong to a character the range's start cut.
  let skipped = 0;
  while (skipped < read.body.length && ((read.body[skipped] ?? 0) & 0xc0) === 0x80) skipped++;
  const decoded = new TextDecoder().decode(read.body.subarray(skipped), { stream: true });
  const text = [...decoded].slice(0, length).join("");
  const start = offset + skipped;
  const end = start + Buffer.byteLength(text);
  const next =
    end < meta.bytes ? ` Read on with read_artifact {"filename": "${meta.name}", "offset": ${end}}.` : " That is the end of the file.";
  return `${text}\n[bytes ${start}–${end} of ${meta.bytes}.${next}]`;
}
