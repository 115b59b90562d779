import { marked } from "marked";
import { filterXSS } from "xss";

/** Markdown or HTML from an agent, made safe to show: rendered, then everything active stripped. */
export function safeHtml(text: string, contentType = "text/markdown"): string {
  const html = /html/.test(contentType) ? text : (marked.parse(text, { async: false, gfm: true }) as string);
  return filterXSS(html, { stripIgnoreTag: true, stripIgnoreTagBody: ["script", "style", "iframe", "object"] });
}
