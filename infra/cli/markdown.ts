import Table from "cli-table3";
import type { Token, Tokens } from "marked";
import { markdown } from "../../shared/text/markdown.js";
import { highlightAnsi } from "./highlight.js";
import type { Palette } from "./render.js";

/**
 * Agent text (Markdown) as terminal lines: tables drawn as tables, lists indented with their
 * markers, code blocks kept line by line (coloured by language), headings and **strong** in bold,
 * `code` in colour. The same dialect as the console (shared/text/markdown.ts): `17*23` stays arithmetic.
 */
export function terminalMarkdown(text: string, c: Palette, color: boolean): string[] {
  const lines = blocks(markdown.lexer(text), { c, color }).join("\n").split("\n");
  while (lines.at(-1)?.trim() === "") lines.pop();
  return lines;
}

interface Style {
  c: Palette;
  color: boolean;
}

function blocks(tokens: Token[], style: Style): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    const block = blockLines(token, style);
    if (block === undefined) continue;
    // One blank line between blocks.
    if (out.length && out.at(-1) !== "") out.push("");
    out.push(...block);
  }
  return out;
}

function blockLines(token: Token, style: Style): string[] | undefined {
  const { c } = style;
  switch (token.type) {
    case "space":
      return undefined;
    case "heading": {
      return [c.bold(inline((token as Tokens.Heading).tokens, style))];
    }
    case "paragraph":
      return inline((token as Tokens.Paragraph).tokens, style).split("\n");
    case "text":
      return inline((token as Tokens.Text).tokens ?? [{ type: "text", raw: token.raw, text: token.text } as Tokens.Text], style).split(
        "\n",
      );
    case "code": {
      const { text, lang } = token as Tokens.Code;
      const body = style.color ? highlightAnsi(text, lang?.split(/\s/)[0]?.toLowerCase()) : text;
      return body.split("\n").map((line) => `${c.dim("│")} ${line}`);
    }
    case "blockquote":
      return blocks((token as Tokens.Blockquote).tokens, style).map((line) => `${c.dim("│")} ${line}`);
    case "list": {
      const list = token as Tokens.List;
      const start = typeof list.start === "number" ? list.start : 1;
      return list.items.flatMap((item, i) => {
        const marker = list.ordered ? `${start + i}.` : item.task ? (item.checked ? "[x]" : "[ ]") : "-";
        const body = blocks(
          item.tokens.filter((t) => t.type !== "checkbox"),
          style,
        ).filter((line, j, all) => line !== "" || (j > 0 && j < all.length - 1 && list.loose));
        return body.map((line, j) => (j === 0 ? `${marker} ${line}` : `${" ".repeat(marker.length + 1)}${line}`));
      });
    }
    case "table": {
      const table = token as Tokens.Table;
      const align = table.align.map((a) => (a === "right" ? "right" : a === "center" ? "center" : "left"));
      const drawn = new Table({
        head: table.header.map((cell) => c.bold(inline(cell.tokens, style))),
        colAligns: align,
        style: { head: [], border: [], compact: false },
        wordWrap: true,
      });
      for (const row of table.rows) drawn.push(row.map((cell) => inline(cell.tokens, style)));
      return drawn.toString().split("\n");
    }
    case "hr":
      return [c.dim("─".repeat(40))];
    case "html":
      return token.raw.trimEnd().split("\n");
    default:
      return token.raw.trimEnd() ? token.raw.trimEnd().split("\n") : undefined;
  }
}

function inline(tokens: Token[] | undefined, style: Style): string {
  const { c } = style;
  return (tokens ?? [])
    .map((token): string => {
      switch (token.type) {
        case "strong":
          return c.bold(inline((token as Tokens.Strong).tokens, style));
        case "em":
        case "del":
          return inline((token as Tokens.Em).tokens, style);
        case "codespan":
          return c.cyan((token as Tokens.Codespan).text);
        case "link": {
          const link = token as Tokens.Link;
          const label = inline(link.tokens, style);
          return label === link.href ? label : `${label} (${link.href})`;
        }
        case "image":
          return `[${(token as Tokens.Image).text}](${(token as Tokens.Image).href})`;
        case "br":
          return "\n";
        case "text":
          return "tokens" in token && token.tokens ? inline(token.tokens, style) : decode(token.text);
        case "escape":
          return token.text;
        default:
          return decode(token.raw);
      }
    })
    .join("");
}

/** marked escapes &, <, >, " and ' in text tokens for HTML; a terminal shows them as they are. */
function decode(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[name] ?? `&${name};`,
  );
}
