import { filterXSS } from "xss";
import { markdown } from "../../display/markdown.js";

/** Markdown or HTML from an agent, made safe to show: rendered, then everything active stripped. */
export function safeHtml(text: string, contentType = "text/markdown"): string {
  const html = /html/.test(contentType) ? text : (markdown.parse(text) as string);
  return filterXSS(html, { stripIgnoreTag: true, stripIgnoreTagBody: ["script", "style", "iframe", "object"] });
}
