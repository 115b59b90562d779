// Words of a text in any script, for matching a question to passages: Unicode word boundaries
// (Intl.Segmenter, ICU's dictionaries for Chinese, Japanese and Thai), not runs of letters, so a
// question written without spaces is several words rather than one.

// Word boundaries are the same in every locale (Unicode's rules and ICU's dictionaries), so the default does.
// Made on the first text, not at import: loading ICU's word rules costs ~25 ms of CPU that every
// function importing the tool catalogue paid at cold start, most of them never segmenting a word.
let segmenter: Intl.Segmenter | undefined;

export interface Word {
  /** Lowercase, in Unicode compatibility form (full-width "２０２６" is "2026"). */
  text: string;
  /** Where it starts in the text. */
  index: number;
}

/** Every word of a text, in order (punctuation and spaces left out). */
export function wordsOf(text: string): Word[] {
  const words: Word[] = [];
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "word" });
  for (const { segment, index, isWordLike } of segmenter.segment(text))
    if (isWordLike) words.push({ text: segment.normalize("NFKC").toLowerCase(), index });
  return words;
}

/** Words that carry no subject in a question: English and the commonest Chinese, Japanese and Thai function words. */
const STOP_WORDS = new Set(
  [
    "an and are as at be by for from how in is it of on or the to what when where which who why with does do did this that these those about into than then",
    "什么 怎么 怎样 如何 多少 哪些 哪个 为什么 有没有 这个 那个 一个 我们 你们 他们",
    "から まで です ます でしょう ですか どの どう どれ なに くらい ぐらい",
    "ของ มี ที่ และ ใน เป็น ไหม อะไร อย่างไร ไหร่",
  ]
    .join(" ")
    .split(" "),
);

/**
 * The words of a question worth matching, each once: no function words and no one-character words
 * (particles such as 的, 了, は; a Chinese compound the dictionary splits keeps its longer part).
 */
export function keywords(text: string): string[] {
  const kept = wordsOf(text)
    .map((word) => word.text)
    .filter((word) => word.length >= 2 && !STOP_WORDS.has(word));
  return [...new Set(kept)];
}

/** A word long enough to name a subject: `letters` or more, or two in Chinese or Japanese, whose words are short. */
export const isLongWord = (word: string, letters: number) =>
  word.length >= letters || (word.length >= 2 && /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(word));
