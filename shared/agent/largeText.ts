import type { FileStore } from "../ports/files.js";

/** Text kept inline on a run or task record at most (an item is at most 400 KB, and holds more). */
export const MAX_INLINE_TEXT = 100_000;

/**
 * A result too long for the record it goes on (a model's 400 KB answer) is stored whole as a file
 * of the run, and the record keeps its beginning with a pointer to the file, instead of the write
 * failing and the run with it.
 */
export async function fitText(files: FileStore, runId: string, name: string, text: string): Promise<string> {
  if (text.length <= MAX_INLINE_TEXT) return text;
  try {
    await files.put(runId, name, text, { description: "The whole text; the run's record keeps its beginning" });
  } catch {
    // A store with a size limit of its own (the table adapter): keep as much as it takes.
    await files.put(runId, name, `${text.slice(0, 300_000)}\n[cut at 300000 of ${text.length} characters]`, {
      description: "The text's beginning (too long to store whole)",
    });
  }
  return `${text.slice(0, MAX_INLINE_TEXT)}\n\n[cut at ${MAX_INLINE_TEXT} of ${text.length} characters: the whole text is the run's file ${name}]`;
}
