import { createRequire } from "node:module";

/**
 * Code coloured for a terminal: highlight.js marks the tokens up as HTML, turned here into SGR
 * colours. Loaded through require with a small type of its own: the package's types pull the DOM
 * library into the Node project.
 */
interface Highlighter {
  getLanguage(name: string): unknown;
  highlight(code: string, options: { language: string; ignoreIllegals: boolean }): { value: string };
}
const hljs = createRequire(import.meta.url)("highlight.js/lib/common") as Highlighter;

/** SGR colours per highlight.js token class (first class of a span). */
const COLOURS: Record<string, number> = {
  keyword: 35,
  built_in: 36,
  literal: 36,
  number: 33,
  string: 32,
  regexp: 32,
  comment: 90,
  quote: 90,
  title: 34,
  function: 34,
  params: 39,
  attr: 33,
  attribute: 33,
  variable: 31,
  meta: 90,
  name: 31,
  tag: 31,
  section: 34,
  bullet: 33,
  symbol: 33,
};
const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#x27;": "'", "&#39;": "'" };
const decodeEntities = (text: string) => text.replace(/&(amp|lt|gt|quot|#x27|#39);/g, (entity) => ENTITIES[entity] ?? entity);

/** The code with colours for its language; as it is when the language is unknown. */
export function highlightAnsi(code: string, language: string | undefined): string {
  if (!language || !hljs.getLanguage(language)) return code;
  const html = hljs.highlight(code, { language, ignoreIllegals: true }).value;
  const stack: number[] = [];
  let out = "";
  for (const [token, cls] of html.matchAll(/<span class="([^"]*)">|<\/span>|[^<]+/g)) {
    if (cls !== undefined) {
      const colour = COLOURS[cls.replace(/^hljs-/, "").split(/[\s.]/)[0]] ?? stack.at(-1) ?? 39;
      stack.push(colour);
      out += `\x1b[${colour}m`;
    } else if (token === "</span>") {
      stack.pop();
      out += `\x1b[${stack.at(-1) ?? 39}m`;
    } else out += decodeEntities(token);
  }
  return `${out}\x1b[39m`;
}
