import * as z from "zod";

/**
 * Long URLs seen by the model, numbered: the placeholder `[url:N]` stands for `urls[N - 1]`
 * (the Gaoding seed's VariableMemoryManager). A plain object, so it is saved with the run's
 * memory and the numbering stays the same across Lambda turns.
 */
export const UrlTable = z.object({ urls: z.array(z.string()) });
export type UrlTable = z.infer<typeof UrlTable>;

/** URLs up to this length cost few tokens and stay as they are. */
export const DEFAULT_URL_MIN_LENGTH = 60;

export function createUrlTable(): UrlTable {
  return { urls: [] };
}

// A URL ends at whitespace, quotes, angle brackets, a backslash, CJK punctuation, or the "](" between
// a Markdown link's text and its target. Since it never contains `"` or `\`, a URL restored inside
// raw JSON text keeps that JSON valid.
// The CJK punctuation is ，。！？；：、（）【】《》「」『』“”‘’…, written as escapes: regular expressions are
// the one place the bundler keeps non-ASCII as is, and one such character makes Node decode a whole
// 3 MB bundle as UTF-16 at cold start (tens of ms; `npm run bench -- bundles` counts them).
const URL_PATTERN =
  /https?:\/\/(?:(?!\]\()[^\s<>"'`\\\uff0c\u3002\uff01\uff1f\uff1b\uff1a\u3001\uff08\uff09\u3010\u3011\u300a\u300b\u300c\u300d\u300e\u300f\u201c\u201d\u2018\u2019\u2026])+/giu;
const TRAILING_PUNCTUATION = /[.,;:!?*]$/u;
const CLOSING_TO_OPENING: Record<string, string> = { ")": "(", "]": "[", "}": "{" };
const PLACEHOLDER_PATTERN = /\[url:(\d+)\]/g;

/**
 * Replaces each URL longer than `minLength` with its placeholder, adding new URLs to `table`
 * (the table is extended in place; a URL seen before keeps its number).
 */
export function compressUrls(text: string, table: UrlTable, minLength = DEFAULT_URL_MIN_LENGTH): string {
  return text.replace(URL_PATTERN, (match) => {
    const url = trimUrlEnd(match);
    if (url.length <= minLength) return match;
    let index = table.urls.indexOf(url);
    if (index < 0) index = table.urls.push(url) - 1;
    return `[url:${index + 1}]${match.slice(url.length)}`;
  });
}

/**
 * Puts the URLs back into whatever the model produced: a string (raw JSON arguments included), or
 * any JSON-like value, restored deeply into a copy. Unknown placeholders are left as they are.
 */
export function restoreUrls<T>(value: T, table: UrlTable): T {
  return restoreValue(value, table) as T;
}

function restoreValue(value: unknown, table: UrlTable): unknown {
  if (typeof value === "string") {
    return value.replace(PLACEHOLDER_PATTERN, (placeholder, n: string) => table.urls[Number(n) - 1] ?? placeholder);
  }
  if (Array.isArray(value)) return value.map((item) => restoreValue(item, table));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, restoreValue(item, table)]));
  }
  return value;
}

/** Drops what follows a URL in prose: a sentence's punctuation, a closing bracket it did not open. */
function trimUrlEnd(found: string): string {
  let url = found;
  for (;;) {
    const last = url.at(-1) ?? "";
    const opening = CLOSING_TO_OPENING[last];
    const unbalanced = opening !== undefined && count(url, last) > count(url, opening);
    if (!TRAILING_PUNCTUATION.test(url) && !unbalanced) return url;
    url = url.slice(0, -1);
  }
}

function count(text: string, char: string): number {
  return text.split(char).length - 1;
}
