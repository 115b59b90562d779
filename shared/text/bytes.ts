/**
 * Sizes are counted in UTF-8 bytes wherever a store limits bytes (a DynamoDB item holds 400 KB;
 * Chinese, Japanese and Korean text is 3 bytes a character, so a character count says little).
 */
export const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8");

/** The longest beginning of `text` within `bytes` UTF-8 bytes, never cutting a character in two. */
export function cutToBytes(text: string, bytes: number): string {
  if (utf8Bytes(text) <= bytes) return text;
  const cut = Buffer.from(text).subarray(0, bytes + 1);
  // Back to the start of the character the cut falls in (10xxxxxx are its continuation bytes).
  let end = bytes;
  while (end > 0 && ((cut[end] ?? 0) & 0xc0) === 0x80) end--;
  return cut.subarray(0, end).toString("utf8");
}

/**
 * The longest beginning of `text` within `bytes` UTF-8 bytes that ends between two graphemes (what a
 * reader sees as one character): a flag, an emoji with its skin tone, or a letter with its accents
 * is kept whole or left out whole, never shown in part.
 */
export function cutToGraphemes(text: string, bytes: number): string {
  const cut = cutToBytes(text, bytes);
  if (cut.length === text.length) return cut;
  // Only the graphemes around the cut matter: segment a short window that surely starts at one, and
  // holds the whole code point after the cut (a skin tone is a surrogate pair that extends its emoji).
  const from = Math.max(0, cut.length - GRAPHEME_WINDOW);
  let end = from;
  for (const { index } of new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text.slice(from, cut.length + 2))) {
    if (from + index > cut.length) break;
    end = from + index;
  }
  return text.slice(0, from === 0 || end > from ? end : cut.length);
}

/** Longer than any grapheme met in practice (an emoji family is 11 code units). */
const GRAPHEME_WINDOW = 64;
