import { filterXSS, getDefaultWhiteList } from "xss";
import { markdown } from "../../../shared/text/markdown.js";

/** The default safe markup, plus the classes and labels of our own reports and slides (styled by console.css). */
const whiteList = {
  ...getDefaultWhiteList(),
  section: ["class", "aria-label"],
  figure: ["class"],
};

/** Markdown or HTML from an agent, made safe to show: rendered, then everything active stripped. */
export function safeHtml(text: string, contentType = "text/markdown"): string {
  const html = /html/.test(contentType) ? text : (markdown.parse(text) as string);
  return filterXSS(html, { whiteList, stripIgnoreTag: true, stripIgnoreTagBody: ["script", "style", "iframe", "object"] });
}
