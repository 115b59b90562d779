/**
 * The note a text ends with when a record keeps only its beginning (memory/largeText.ts cuts it):
 * how much is kept, how long the whole is, and the run file that holds it whole. Readers of the
 * record (the run view, the whole-result route) read the note back with `keptPart`.
 */
export const keptNote = (keptBytes: number, wholeBytes: number, file: string) =>
  `\n\n[cut at ${keptBytes} of ${wholeBytes} bytes: the whole text is the run's file ${file}]`;

const KEPT_NOTE = /\n\n\[cut at (\d+) of (\d+) bytes: the whole text is the run's file ([^\n\]]+)\]$/;

/** A text a record keeps in part: its beginning, the whole's size and the file holding it; undefined for a whole text. */
export function keptPart(text: string): { beginning: string; wholeBytes: number; file: string } | undefined {
  const note = KEPT_NOTE.exec(text);
  if (!note) return undefined;
  return { beginning: text.slice(0, note.index), wholeBytes: Number(note[2]), file: note[3] as string };
}
