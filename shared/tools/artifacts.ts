import { z } from "zod";
import { fileText } from "../ports/files.js";
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
  parameters: z.object({ filename, content: z.string().max(300_000), description: z.string().max(500).optional() }),
  async run({ filename, content, description }, { runId, files, idempotencyKey }) {
    // Once per call: a retry after a crash finds the file its key wrote.
    const saved = await files.put(runId, filename, content, { description, idempotencyKey });
    return `Saved ${saved.name} (${saved.bytes} bytes).`;
  },
});

const MAX_READ_CHARS = 30_000;

export const readArtifact = defineTool({
  name: "read_artifact",
  persona: "Researcher",
  description: "Read a file saved earlier in this run.",
  access: "read",
  parameters: z.object({ filename }),
  async run({ filename }, { runId, files }) {
    const file = await files.get(runId, filename);
    if (!file) {
      const names = (await files.list(runId)).map((a) => a.name);
      return `Error: no file named ${filename}. Files: ${names.join(", ") || "none"}.`;
    }
    const content = fileText(file);
    const cut = content.length > MAX_READ_CHARS;
    return cut ? `${content.slice(0, MAX_READ_CHARS)}\n[cut at ${MAX_READ_CHARS} of ${content.length} characters]` : content;
  },
});
