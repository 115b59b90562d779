export interface LimitedToolOutput {
  /** What the model sees: the output, or its head and a line saying where the rest is. */
  forModel: string;
  truncated: boolean;
}

/**
 * Caps what the model sees of one tool output at `maxChars` (JD Genie's max_observe, 10,000),
 * pointer line included. The caller stores the whole output as the artifact `artifactName`; the
 * pointer tells the model so, and how to read it, instead of letting it guess at a cut-off text.
 * The head is kept (that is where results and errors start), cut at a line break when one is near.
 * If `maxChars` cannot even hold the pointer line, the pointer line alone is returned.
 */
export function limitToolOutput(output: string, maxChars: number, artifactName: string): LimitedToolOutput {
  if (output.length <= maxChars) return { forModel: output, truncated: false };
  // The pointer's length depends on the number it shows; sizing it for maxChars first is an upper bound.
  const room = Math.max(0, maxChars - pointerLine(maxChars, output.length, artifactName).length);
  const head = output.slice(0, cutPoint(output, room));
  return { forModel: head + pointerLine(head.length, output.length, artifactName), truncated: true };
}

function pointerLine(shown: number, total: number, artifactName: string): string {
  return (
    `\n[Output truncated: showing the first ${shown} of ${total} characters. ` +
    `The whole output is stored as the artifact "${artifactName}"; read the rest with read_artifact {"filename": "${artifactName}", "offset": ${shown}}.]`
  );
}

/** Where to cut within `room` characters: at the last line break in its final fifth, else at `room`. */
function cutPoint(text: string, room: number): number {
  if (room <= 0) return 0;
  const lineBreak = text.lastIndexOf("\n", room - 1);
  if (lineBreak >= room * 0.8) return lineBreak + 1;
  // Never split a surrogate pair: half an emoji is not text.
  const code = text.charCodeAt(room - 1);
  return code >= 0xd800 && code <= 0xdbff ? room - 1 : room;
}
