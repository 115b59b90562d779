import type { FileStore } from "../ports/files.js";

/**
 * Text kept inline on a run or task record at most, in UTF-8 bytes (an item is at most 400 KB and
 * holds more: the input, the plan; Chinese, Japanese and Korean text is 3 bytes a character).
 */
export const MAX_INLINE_BYTES = 100_000;
/** What the table adapter (DynamoDB items) stores of a text too long to store whole. */
const MAX_STORED_BYTES = 300_000;

/** The longest beginning of `text` within `bytes` UTF-8 bytes, never cutting a character in two. */
export function cutToBytes(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  const cut = Buffer.from(text).subarray(0, bytes + 1);
  // Back to the start of the character the cut falls in (10xxxxxx are its continuation bytes).
  let end = bytes;
  while (end > 0 && ((cut[end] ?? 0) & 0xc0) === 0x80) end--;
  return cut.subarray(0, end).toString("utf8");
}

/**
 * A result too long for the record it goes on (a model's 400 KB answer) is stored whole as a file
 * of the run, and the record keeps its beginning with a pointer to the file, instead of the write
 * failing and the run with it.
 */
export async function fitText(files: FileStore, runId: string, name: string, text: string): Promise<string> {
  const bytes = Buffer.byteLength(text);
  if (bytes <= MAX_INLINE_BYTES) return text;
  try {
    await files.put(runId, name, text, { description: "The whole text; the run's record keeps its beginning" });
  } catch {
    // A store with a size limit of its own (the table adapter): keep as much as it takes.
    await files.put(runId, name, `${cutToBytes(text, MAX_STORED_BYTES)}\n[cut at ${MAX_STORED_BYTES} of ${bytes} bytes]`, {
      description: "The text's beginning (too long to store whole)",
    });
  }
  return `${cutToBytes(text, MAX_INLINE_BYTES)}\n\n[cut at ${MAX_INLINE_BYTES} of ${bytes} bytes: the whole text is the run's file ${name}]`;
}
