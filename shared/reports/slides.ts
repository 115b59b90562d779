import type { Token, Tokens } from "marked";
import { lazyImport } from "../lazyImport.js";
import { markdown as markdownDialect } from "../text/markdown.js";
import { escapeHtml } from "./html.js";

/**
 * A slide deck from a report's Markdown: a title slide, then each `## ` section as slides of
 * bullets (split over as many slides as it takes to fit) and its tables as slide tables (split the
 * same way, the header on every slide), each chart on a slide of its own, and the section's text as
 * the speaker notes of each of its slides. The same outline gives the .pptx (pptxgenjs, loaded
 * on first use) and an HTML rendering of the slides for previews.
 */

/** A slide holds at most this many bullets, each cut to this many characters: text that fits a 16:9 slide at 18 pt. */
export const SLIDE_LIMITS = { bullets: 6, bulletChars: 160, tableRows: 7, cellChars: 40 } as const;

/** A table as a slide shows it: its header, and the rows that fit. */
export interface SlideTable {
  header: string[];
  rows: string[][];
}

export interface Slide {
  title: string;
  bullets: string[];
  table?: SlideTable;
  /** A chart on its own slide: its PNG. */
  image?: { png: Uint8Array; alt: string };
  notes: string;
}

export interface DeckChart {
  title: string;
  png: Uint8Array;
}

/** The slides of a deck: title slide first, then the sections in order, then the charts. */
export function outline(title: string, markdown: string, charts: DeckChart[] = []): Slide[] {
  const slides: Slide[] = [{ title, bullets: [], notes: "" }];
  const sections = sectionsOf(markdown);
  // Text before the first heading is the title slide's subtitle and notes.
  const intro = sections[0];
  if (intro?.title === "") {
    sections.shift();
    slides[0] = { title, bullets: intro.bullets.slice(0, 2).map(cut), notes: intro.notes };
  }
  for (const section of sections) {
    const bullets = section.bullets.map(cut);
    const first = slides.length;
    const titled = () => (slides.length === first ? section.title : `${section.title} (cont.)`);
    for (let start = 0; start < bullets.length || (start === 0 && section.tables.length === 0); start += SLIDE_LIMITS.bullets)
      slides.push({ title: titled(), bullets: bullets.slice(start, start + SLIDE_LIMITS.bullets), notes: section.notes });
    for (const table of section.tables)
      for (let start = 0; start < Math.max(1, table.rows.length); start += SLIDE_LIMITS.tableRows)
        slides.push({
          title: titled(),
          bullets: [],
          table: { header: table.header, rows: table.rows.slice(start, start + SLIDE_LIMITS.tableRows) },
          notes: section.notes,
        });
  }
  for (const chart of charts)
    slides.push({ title: chart.title, bullets: [], image: { png: chart.png, alt: chart.title }, notes: `Chart: ${chart.title}` });
  return slides;
}

/** The deck as a .pptx file (16:9). */
export async function pptxOf(title: string, slides: Slide[]): Promise<Uint8Array> {
  // A CommonJS build under an ESM name: the class is the default export at run time.
  const PptxGenJS = (await lazyImport(() => import("pptxgenjs"), "pptxgenjs")).default as unknown as new () => import("pptxgenjs").default;
  const deck = new PptxGenJS();
  deck.layout = "LAYOUT_16x9"; // 10 × 5.625 in
  deck.title = title;
  for (const [index, outlineSlide] of slides.entries()) {
    const slide = deck.addSlide();
    if (index === 0) {
      slide.addText(outlineSlide.title, { x: 0.6, y: 1.6, w: 8.8, h: 1.4, fontSize: 36, bold: true, color: "1F2328", fontFace: "Arial" });
      if (outlineSlide.bullets.length)
        slide.addText(outlineSlide.bullets.join("\n"), {
          x: 0.6,
          y: 3.1,
          w: 8.8,
          h: 1.4,
          fontSize: 16,
          color: "59636E",
          fontFace: "Arial",
          valign: "top",
        });
    } else {
      slide.addText(outlineSlide.title, { x: 0.5, y: 0.3, w: 9, h: 0.8, fontSize: 26, bold: true, color: "1F2328", fontFace: "Arial" });
      if (outlineSlide.image) {
        slide.addImage({
          data: `image/png;base64,${Buffer.from(outlineSlide.image.png).toString("base64")}`,
          x: 1.5,
          y: 1.2,
          w: 7,
          h: 4.1,
          sizing: { type: "contain", w: 7, h: 4.1 },
          altText: outlineSlide.image.alt,
        });
      }
      if (outlineSlide.table) {
        const { header, rows } = outlineSlide.table;
        const cell = (text: string, head: boolean) => ({
          text,
          options: head ? { bold: true, fill: { color: "F6F8FA" } } : {},
        });
        slide.addTable([header.map((h) => cell(h, true)), ...rows.map((row) => row.map((c) => cell(c, false)))], {
          x: 0.5,
          y: 1.2,
          w: 9,
          fontSize: 14,
          fontFace: "Arial",
          color: "1F2328",
          border: { type: "solid", pt: 0.75, color: "D0D7DE" },
        });
      }
      if (outlineSlide.bullets.length) {
        slide.addText(
          outlineSlide.bullets.map((text) => ({ text, options: { bullet: true, breakLine: true } })),
          { x: 0.5, y: 1.2, w: 9, h: 4.1, fontSize: 18, color: "1F2328", fontFace: "Arial", valign: "top", paraSpaceAfter: 6 },
        );
      }
    }
    if (outlineSlide.notes) slide.addNotes(outlineSlide.notes);
  }
  return new Uint8Array((await deck.write({ outputType: "nodebuffer" })) as Buffer);
}

/** The slides as one self-contained web page: each a 16:9 box, charts as data: images (what a preview shows of the .pptx). */
export function slidesHtml(title: string, slides: Slide[]): string {
  const boxes = slides.map((slide, i) => {
    const body = slide.image
      ? `<img alt="${escapeHtml(slide.image.alt)}" src="data:image/png;base64,${Buffer.from(slide.image.png).toString("base64")}">`
      : slide.table
        ? `<table><thead><tr>${slide.table.header.map((c) => `<th>${escapeHtml(c)}</th>`).join("")}</tr></thead><tbody>${slide.table.rows.map((row) => `<tr>${row.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`
        : slide.bullets.length
          ? i === 0
            ? `<p>${slide.bullets.map(escapeHtml).join("<br>")}</p>`
            : `<ul>${slide.bullets.map((b) => `<li>${escapeHtml(b)}</li>`).join("")}</ul>`
          : "";
    return `<section class="slide${i === 0 ? " title" : ""}" aria-label="Slide ${i + 1}"><h${i === 0 ? 1 : 2}>${escapeHtml(slide.title)}</h${i === 0 ? 1 : 2}>${body}<small>${i + 1}</small></section>`;
  });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)} (slides)</title>
<style>body{font:16px/1.4 Arial,sans-serif;background:#eef1f4;margin:1rem}.slide{position:relative;aspect-ratio:16/9;max-width:48rem;margin:0 auto 1rem;background:#fff;border:1px solid #d0d7de;padding:1.5rem 2rem;box-sizing:border-box;overflow:hidden}.slide.title{display:flex;flex-direction:column;justify-content:center}.slide img{display:block;max-width:80%;max-height:75%;margin:0 auto}.slide small{position:absolute;right:1rem;bottom:.5rem;color:#59636e}.slide table{border-collapse:collapse}.slide th,.slide td{border:1px solid #d0d7de;padding:.2rem .6rem;text-align:left}.slide th{background:#f6f8fa}</style>
</head>
<body>
${boxes.join("\n")}
</body>
</html>
`;
}

interface Section {
  title: string;
  bullets: string[];
  tables: SlideTable[];
  /** The section's text, plain (its tables a row a line): the speaker notes. */
  notes: string;
}

/** The report's `## ` sections (text before the first one has the title ""), each as bullet lines and tables. */
function sectionsOf(markdown: string): Section[] {
  const sections: Section[] = [];
  let current: Section | undefined;
  const notes = new Map<Section, string[]>();
  for (const token of markdownDialect.lexer(markdown)) {
    if (token.type === "heading" && token.depth <= 2) {
      current = { title: plain(token.text), bullets: [], tables: [], notes: "" };
      sections.push(current);
      continue;
    }
    if (!current) {
      current = { title: "", bullets: [], tables: [], notes: "" };
      sections.push(current);
    }
    if (token.type === "table") {
      const table = token as Tokens.Table;
      const cells = (row: Tokens.TableCell[]) => row.map((c) => cutCell(plain(c.text)));
      current.tables.push({ header: cells(table.header), rows: table.rows.map(cells) });
    } else current.bullets.push(...bulletsOf(token));
    const said = noteLines(token);
    if (said.length) notes.set(current, [...(notes.get(current) ?? []), ...said]);
  }
  for (const section of sections) section.notes = (notes.get(section) ?? []).join("\n");
  return sections.filter((s) => s.title !== "" || s.bullets.length > 0 || s.tables.length > 0);
}

/** The bullet lines a block gives: a paragraph's text, each list item, a sub-heading, a quote, a code block's first line. */
function bulletsOf(token: Token): string[] {
  switch (token.type) {
    case "paragraph":
    case "heading":
      return [plain(token.text)];
    case "list":
      return (token as Tokens.List).items.map((item) => plain(item.text));
    case "blockquote":
      return [plain((token as Tokens.Blockquote).text)];
    case "code":
      return [(token as Tokens.Code).text.split("\n")[0]];
    default:
      return [];
  }
}

/** What a presenter reads of a block: its text whole, a list's items, a table a row a line. */
function noteLines(token: Token): string[] {
  switch (token.type) {
    case "table": {
      const table = token as Tokens.Table;
      return [table.header, ...table.rows].map((row) => row.map((cell) => plain(cell.text)).join(" | "));
    }
    case "list":
      return (token as Tokens.List).items.map((item) => `- ${plain(item.text)}`);
    case "code":
      return [(token as Tokens.Code).text];
    case "space":
    case "hr":
      return [];
    default:
      return "text" in token && typeof token.text === "string" ? [plain(token.text)] : [];
  }
}

/**
 * Inline Markdown as the text it shows: emphasis and code marks dropped, escapes resolved, links
 * as their text; an underscore or asterisk that is not markup (run_code, 2*3*4) stays, as in the
 * console's dialect.
 */
function plain(text: string): string {
  return inlineText(markdownDialect.Lexer.lexInline(text, markdownDialect.defaults)).replace(/\s+/g, " ").trim();
}

function inlineText(tokens: Token[]): string {
  return tokens
    .map((token) => {
      if ("tokens" in token && Array.isArray(token.tokens) && token.type !== "text") return inlineText(token.tokens);
      if (token.type === "br") return " ";
      return "text" in token && typeof token.text === "string" ? decodeEntities(token.text) : "";
    })
    .join("");
}

/** The entities marked leaves in text (it escapes at rendering only, but a source may have written them). */
const decodeEntities = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[name] ?? _);

const cut = (text: string) => (text.length <= SLIDE_LIMITS.bulletChars ? text : `${text.slice(0, SLIDE_LIMITS.bulletChars - 1)}…`);
const cutCell = (text: string) => (text.length <= SLIDE_LIMITS.cellChars ? text : `${text.slice(0, SLIDE_LIMITS.cellChars - 1)}…`);
