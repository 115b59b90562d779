import type { FileStore } from "../ports/files.js";
import { cutToBytes, utf8Bytes } from "../text/bytes.js";
import { keptNote } from "../text/keptNote.js";

export { cutToBytes } from "../text/bytes.js";

/**
 * Text kept inline on a run or task record at most, in UTF-8 bytes (an item is at most 400 KB and
 * holds more: the input, the plan; Chinese, Japanese and Korean text is 3 bytes a character).
 */
export const MAX_INLINE_BYTES = 100_000;
/** What the table adapter (DynamoDB items) stores of a text too long to store whole. */
const MAX_STORED_BYTES = 300_000;

/** Whether `text` is too long to keep whole on a record. */
export const overInline = (text: string): boolean => utf8Bytes(text) > MAX_INLINE_BYTES;

/** What a record keeps of a text too long for it: its beginning and the run file that holds it whole. */
export function inlineBeginning(text: string, name: string): string {
  if (!overInline(text)) return text;
  return `${cutToBytes(text, MAX_INLINE_BYTES)}${keptNote(MAX_INLINE_BYTES, utf8Bytes(text), name)}`;
}

/** Stores a text too long for its record whole, as a file of the run (the record keeps `inlineBeginning`). */
export async function storeWhole(files: FileStore, runId: string, name: string, text: string): Promise<void> {
  try {
    await files.put(runId, name, text, { description: "The whole text; the run's record keeps its beginning" });
  } catch {
    // A store with a size limit of its own (the table adapter): keep as much as it takes.
    await files.put(runId, name, `${cutToBytes(text, MAX_STORED_BYTES)}\n[cut at ${MAX_STORED_BYTES} of ${utf8Bytes(text)} bytes]`, {
      description: "The text's beginning (too long to store whole)",
    });
  }
}

/**
 * A result too long for the record it goes on (a model's 400 KB answer) is stored whole as a file
 * of the run, and the record keeps its beginning with a pointer to the file, instead of the write
 * failing and the run with it.
 */
export async function fitText(files: FileStore, runId: string, name: string, text: string): Promise<string> {
  if (!overInline(text)) return text;
  await storeWhole(files, runId, name, text);
  return inlineBeginning(text, name);
}
