import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";

export interface ReadablePage {
  title: string;
  markdown: string;
}

const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
turndown.remove(["script", "style", "noscript", "iframe", "form"] as any);

/** HTML as Markdown (ATX headings, fenced code, '-' bullets); scripts, styles and forms dropped. */
export const htmlToMarkdown = (html: string): string => turndown.turndown(html).trim();

/** A page's main text as Markdown: Readability finds the article, Turndown writes it. */
export function readable(html: string, url: string): ReadablePage {
  const { document } = parseHTML(html);
  // Relative links become absolute, so the notes still point somewhere.
  for (const link of document.querySelectorAll("a[href]")) {
    try {
      link.setAttribute("href", new URL(link.getAttribute("href")!, url).href);
    } catch {}
  }
  const fallbackTitle = document.querySelector("title")?.textContent?.trim() ?? "";
  const article = new Readability(document as any).parse();
  const html2 = article?.content ?? document.body?.innerHTML ?? html;
  return { title: article?.title?.trim() || fallbackTitle || url, markdown: htmlToMarkdown(html2) };
}

/** The text of any fetched body: HTML made readable, text kept, anything else refused. */
export function pageText(body: string, contentType: string, url: string): ReadablePage | undefined {
  if (/html|xml/i.test(contentType) || (!contentType && /^\s*</.test(body))) return readable(body, url);
  if (/^(text\/|application\/(json|[\w.+-]*\+json))/i.test(contentType)) return { title: url, markdown: body.trim() };
  return undefined;
}
