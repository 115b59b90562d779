import type TurndownService from "turndown";
import { lazyImport } from "../lazyImport.js";

export interface ReadablePage {
  title: string;
  markdown: string;
}

/**
 * The HTML libraries (linkedom, Readability, Turndown: some 250 modules) load on first use, not with
 * the agent functions: most turns read no page, and loading them cost every cold start a third of a
 * second. On AWS they are in the work products' layer, so the functions that only list the web
 * tools (the API, the stream) do not carry them.
 */
async function loadHtmlLibraries() {
  const [{ default: Turndown }, { parseHTML }, readability] = await Promise.all([
    lazyImport(() => import("turndown"), "turndown"),
    lazyImport(() => import("linkedom"), "linkedom"),
    lazyImport(() => import("@mozilla/readability"), "@mozilla/readability"),
  ]);
  // A CommonJS package: Node names its exports; the layer's prebuilt module has them on its default.
  const Readability = readability.Readability ?? (readability as unknown as { default: typeof readability }).default.Readability;
  return { turndown: markdownWriter(Turndown), parseHTML, Readability };
}
let libraries: ReturnType<typeof loadHtmlLibraries> | undefined;
const htmlLibraries = () => (libraries ??= loadHtmlLibraries());

function markdownWriter(Turndown: typeof TurndownService): TurndownService {
  const turndown = new Turndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  turndown.remove(["script", "style", "noscript", "iframe", "form"] as TurndownService.Filter);
  // Turndown alone keeps a table's cells as loose paragraphs: which value was in which row and column is lost.
  turndown.addRule("table", {
    filter: "table",
    replacement: (_content, table) => {
      const rows = tableRows(turndown, table as unknown as DomNode);
      return rows.length ? `\n\n${markdownTable(rows)}\n\n` : "";
    },
  });
  return turndown;
}

/** What the rule reads of turndown's DOM nodes. */
interface DomNode {
  nodeName: string;
  childNodes: ArrayLike<DomNode>;
}

/** A table's rows (its own, not a nested table's), each cell's content as one line of Markdown. */
function tableRows(turndown: TurndownService, table: DomNode): string[][] {
  const children = (node: DomNode, ...names: string[]) => Array.from(node.childNodes).filter((child) => names.includes(child.nodeName));
  const rows = children(table, "TR", "THEAD", "TBODY", "TFOOT").flatMap((part) => (part.nodeName === "TR" ? [part] : children(part, "TR")));
  return rows.map((row) => children(row, "TH", "TD").map((cell) => turndown.turndown(cell as unknown as TurndownService.Node).trim()));
}

/** Rows as a Markdown table, the first row its header; short rows padded, pipes escaped, line breaks as <br>. */
export function markdownTable(rows: string[][]): string {
  if (!rows.length) return "(empty)";
  const width = rows.reduce((widest, row) => Math.max(widest, row.length), 0);
  const cell = (text: string) => text.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, "<br>");
  const line = (row: string[]) => `| ${Array.from({ length: width }, (_, i) => cell(row[i] ?? "")).join(" | ")} |`;
  const [header, ...body] = rows;
  return [line(header), `|${Array<string>(width).fill(" --- ").join("|")}|`, ...body.map(line)].join("\n");
}

/** HTML as Markdown (ATX headings, fenced code, '-' bullets, tables); scripts, styles and forms dropped. */
export async function htmlToMarkdown(html: string): Promise<string> {
  const { turndown } = await htmlLibraries();
  return turndown.turndown(html).trim();
}

/** A page's main text as Markdown: Readability finds the article, Turndown writes it. */
async function readable(html: string, url: string): Promise<ReadablePage> {
  const { parseHTML, Readability } = await htmlLibraries();
  const { document } = parseHTML(html);
  // Relative links become absolute, so the notes still point somewhere.
  for (const link of document.querySelectorAll("a[href]")) {
    try {
      link.setAttribute("href", new URL(link.getAttribute("href"), url).href);
    } catch {}
  }
  const fallbackTitle = document.querySelector("title")?.textContent?.trim() ?? "";
  const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
  const html2 = article?.content ?? document.body?.innerHTML ?? html;
  return { title: article?.title?.trim() || fallbackTitle || url, markdown: await htmlToMarkdown(html2) };
}

/** The text of any fetched body: HTML made readable, text kept, anything else refused. */
export async function pageText(body: string, contentType: string, url: string): Promise<ReadablePage | undefined> {
  if (/html|xml/i.test(contentType) || (!contentType && /^\s*</.test(body))) return readable(body, url);
  if (/^(text\/|application\/(json|[\w.+-]*\+json))/i.test(contentType)) return { title: url, markdown: body.trim() };
  return undefined;
}
