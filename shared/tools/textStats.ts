import * as z from "zod";
import { isLongWord, wordsOf } from "../text/words.js";
import { defineTool } from "./tool.js";

/** Counts words, sentences and the most frequent terms of a text. */
export const textStats = defineTool({
  name: "text_stats",
  persona: "Copy editor",
  description: "Measure a text: characters, words, sentences and its most frequent terms.",
  access: "read",
  parameters: z.object({ text: z.string().min(1).max(100_000) }),
  async run({ text }) {
    const words = wordsOf(text).map((word) => word.text);
    // The ideographic full stop and the full-width ! and ?, as escapes (shared/memory/urls.ts says why).
    const sentences = text.split(/[.!?\u3002\uff01\uff1f]+/).filter((s) => s.trim()).length;
    const counts = new Map<string, number>();
    for (const word of words) if (isLongWord(word, 4)) counts.set(word, (counts.get(word) ?? 0) + 1);
    const top = [...counts.entries()]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, 5)
      .map(([word, n]) => `${word} (${n})`);
    return `${counted(text.length, "character")}, ${counted(words.length, "word")}, ${counted(sentences, "sentence")}; frequent terms: ${top.join(", ") || "none"}`;
  },
});

/** "1 sentence", "2 sentences". */
const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
