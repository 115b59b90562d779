import { Marked } from "marked";

/**
 * The one Markdown dialect of agent text, for the console (HTML), the CLI (a terminal) and the
 * reports and decks agents write: GitHub-flavoured, with arithmetic kept as written.
 */

/** A `*` between operands (`17*23`, `(120/8)*2`, `2*(3+4)`): arithmetic, not emphasis. */
const OPERAND_BEFORE = /[\p{L}\p{N})\]]$/u;
const STAR_BEFORE_OPERAND = /^\*+(?=[\p{L}\p{N}([])/u;
const OPERAND_STARS = /(?<=[\p{L}\p{N})\]])\*+(?=[\p{L}\p{N}([])/gu;

/**
 * CommonMark lets `*` open and close emphasis inside words, so an answer with `17*23 = 391` and
 * `2*5 = 10` would show `23 = 391 and 2` in italics. Agents write arithmetic far more often than
 * intra-word emphasis: here a `*` between operands is text, never a delimiter (`*word*` still is).
 */
export const markdown = new Marked(
  { gfm: true, async: false },
  {
    // Neither an opener (extensions are tried before the built-in tokenizers)…
    extensions: [
      {
        name: "operandStar",
        level: "inline",
        tokenizer(src, tokens) {
          const stars = STAR_BEFORE_OPERAND.exec(src);
          if (stars && OPERAND_BEFORE.test(tokens.at(-1)?.raw ?? "")) return { type: "text", raw: stars[0], text: stars[0] };
          return undefined;
        },
      },
    ],
    // …nor a closer of emphasis opened elsewhere (the closer search reads this masked copy).
    hooks: { emStrongMask: (src) => src.replace(OPERAND_STARS, (stars) => "+".repeat(stars.length)) },
  },
);
