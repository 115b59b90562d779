import { marked, type Token, type Tokens } from "marked";
import { lazyImport } from "../lazyImport.js";
import { escapeHtml } from "./html.js";

/**
 * A slide deck from a report's Markdown: a title slide, then each `## ` section as slides of
 * bullets (split over as many slides as it takes to fit), each chart on a slide of its own, and the
 * section's source text as the speaker notes. The same outline gives the .pptx (pptxgenjs, loaded
 * on first use) and an HTML rendering of the slides for previews.
 */

/** A slide holds at most this many bullets, each cut to this many characters: text that fits a 16:9 slide at 18 pt. */
export const SLIDE_LIMITS = { bullets: 6, bulletChars: 160 } as const;

export interface Slide {
  title: string;
  bullets: string[];
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
    slides[0] = { title, bullets: intro.bullets.slice(0, 2).map(cut), notes: intro.source };
  }
  for (const section of sections) {
    const bullets = section.bullets.map(cut);
    const pages = Math.max(1, Math.ceil(bullets.length / SLIDE_LIMITS.bullets));
    for (let page = 0; page < pages; page++) {
      slides.push({
        title: page === 0 ? section.title : `${section.title} (cont.)`,
        bullets: bullets.slice(page * SLIDE_LIMITS.bullets, (page + 1) * SLIDE_LIMITS.bullets),
        notes: section.source,
      });
    }
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
<style>body{font:16px/1.4 Arial,sans-serif;background:#eef1f4;margin:1rem}.slide{position:relative;aspect-ratio:16/9;max-width:48rem;margin:0 auto 1rem;background:#fff;border:1px solid #d0d7de;padding:1.5rem 2rem;box-sizing:border-box;overflow:hidden}.slide.title{display:flex;flex-direction:column;justify-content:center}.slide img{display:block;max-width:80%;max-height:75%;margin:0 auto}.slide small{position:absolute;right:1rem;bottom:.5rem;color:#59636e}</style>
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
  /** The section's Markdown as written: the speaker notes. */
  source: string;
}

/** The report's `## ` sections (text before the first one has the title ""), each as bullet lines. */
function sectionsOf(markdown: string): Section[] {
  const sections: Section[] = [];
  let current: Section | undefined;
  for (const token of marked.lexer(markdown)) {
    if (token.type === "heading" && token.depth <= 2) {
      current = { title: plain(token.text), bullets: [], source: "" };
      sections.push(current);
      continue;
    }
    if (!current) {
      current = { title: "", bullets: [], source: "" };
      sections.push(current);
    }
    current.source += token.raw;
    current.bullets.push(...bulletsOf(token));
  }
  for (const section of sections) section.source = section.source.trim();
  return sections.filter((s) => s.title !== "" || s.bullets.length > 0);
}

/** The bullet lines a block gives: a paragraph's text, each list item, a table's rows as "cell · cell", a sub-heading. */
function bulletsOf(token: Token): string[] {
  switch (token.type) {
    case "paragraph":
    case "heading":
      return [plain(token.text)];
    case "list":
      return (token as Tokens.List).items.map((item) => plain(item.text));
    case "table": {
      const table = token as Tokens.Table;
      return [table.header, ...table.rows].map((row) => row.map((cell) => plain(cell.text)).join(" · "));
    }
    case "blockquote":
      return [plain((token as Tokens.Blockquote).text)];
    case "code":
      return [(token as Tokens.Code).text.split("\n")[0]];
    default:
      return [];
  }
}

/** Inline Markdown as plain text: emphasis, code marks and link targets dropped. */
function plain(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*_`~]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

const cut = (text: string) => (text.length <= SLIDE_LIMITS.bulletChars ? text : `${text.slice(0, SLIDE_LIMITS.bulletChars - 1)}…`);
