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
