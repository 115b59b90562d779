/** No result is cut shorter than this (JD Genie's cut for every message of the summary). */
export const MIN_SHARE_CHARS = 1_500;

/**
 * Texts (task results) fitted to `budgetChars` together: each is kept whole when they all fit;
 * otherwise the short ones stay whole and the long ones share what is left equally (never less
 * than MIN_SHARE_CHARS each), cut with a note saying so. `whereWhole` names where a cut text is kept whole.
 */
export function shareBudget(texts: readonly string[], budgetChars: number, whereWhole: (index: number) => string = () => ""): string[] {
  const out = [...texts];
  const order = texts.map((_, i) => i).sort((a, b) => texts[a].length - texts[b].length);
  let left = budgetChars;
  order.forEach((index, k) => {
    const text = texts[index];
    const share = Math.max(MIN_SHARE_CHARS, Math.floor(left / (order.length - k)));
    if (text.length > share) {
      const where = whereWhole(index);
      out[index] = `${text.slice(0, share)}\n[cut at ${share} of ${text.length} characters${where ? `; ${where}` : ""}]`;
    }
    left -= Math.min(text.length, share);
  });
  return out;
}

/**
 * `text` in at most `maxChars` characters: whole, or its beginning and a note saying it was cut
 * (a model must never take part of a text for the whole).
 */
export function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const note = (kept: number) => `… [cut at ${kept} of ${text.length} characters]`;
  const kept = Math.max(0, maxChars - note(maxChars).length);
  return `${text.slice(0, kept)}${note(kept)}`;
}
