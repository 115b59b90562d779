import { marked } from "marked";
import xssModule from "xss";

// A CommonJS package: its named exports hang off the default export at run time.
const xss = xssModule as unknown as typeof import("xss");
import { z } from "zod";
import { defineTool } from "./tool.js";

export const Source = z.object({ url: z.string().url().max(2_000), title: z.string().max(300).optional() });
export type Source = z.infer<typeof Source>;

/** Only markup a report needs; scripts, styles, frames, forms and event handlers are dropped whole. */
const sanitizer = new xss.FilterXSS({
  whiteList: { ...xss.getDefaultWhiteList(), h1: ["id"], h2: ["id"], h3: ["id"], h4: ["id"], input: [] },
  stripIgnoreTag: true,
  stripIgnoreTagBody: ["script", "style", "iframe", "object", "embed", "noscript", "template"],
});

const STYLE = `body{font:16px/1.6 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
h1,h2,h3{line-height:1.25}h1{border-bottom:1px solid #d0d7de;padding-bottom:.3em}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}th{background:#f6f8fa}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;border-radius:4px}pre{padding:.8rem;overflow:auto}code{padding:.1em .3em}
blockquote{margin:0;padding:0 1rem;color:#59636e;border-left:.25em solid #d0d7de}ol.sources{font-size:.9em;color:#59636e}a{color:#0969da}`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Markdown → one self-contained HTML page: sanitized, inline CSS, no scripts (the CSP forbids them too). */
export function renderHtmlReport(title: string, markdown: string, sources: Source[] = []): string {
  const body = sanitizer.process(marked.parse(markdown, { async: false, gfm: true }) as string);
  const list = sources.length
    ? `<h2>Sources</h2>\n<ol class="sources">${sources.map((s) => `<li><a href="${escapeHtml(s.url)}" rel="noopener noreferrer">${escapeHtml(s.title ?? s.url)}</a></li>`).join("")}</ol>`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data: https:">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
${list}
</body>
</html>
`;
}

/** Markdown as written, with the sources as a numbered list at the end. */
export function renderMarkdownReport(title: string, markdown: string, sources: Source[] = []): string {
  const heading = /^\s*#\s/.test(markdown) ? "" : `# ${title}\n\n`;
  const list = sources.length ? `\n\n## Sources\n\n${sources.map((s, i) => `${i + 1}. [${s.title ?? s.url}](${s.url})`).join("\n")}\n` : "\n";
  return `${heading}${markdown.trimEnd()}${list}`;
}

/** A file name from the title: lowercase words joined by '-'. */
export function reportFileName(title: string, format: "markdown" | "html"): string {
  const slug = title.normalize("NFKD").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "report";
  return `${slug}.${format === "html" ? "html" : "md"}`;
}

/** JD Genie's report tool: the run's deliverable as a Markdown or a self-contained HTML file. */
export const writeReport = defineTool({
  name: "write_report",
  description:
    "Write the final report of the run as a file: format 'html' (a self-contained web page rendered from your Markdown) or 'markdown'. " +
    "Give the sources you used (URLs) to list them, numbered, at the end.",
  access: "write",
  grants: ["files:write"],
  parameters: z.object({
    title: z.string().min(1).max(200),
    format: z.enum(["markdown", "html"]).default("html"),
    content: z.string().min(1).max(300_000).describe("The report in Markdown"),
    sources: z.array(Source).max(50).optional(),
  }),
  async run({ title, format, content, sources }, { runId, files, idempotencyKey }) {
    const name = reportFileName(title, format);
    const text = format === "html" ? renderHtmlReport(title, content, sources) : renderMarkdownReport(title, content, sources);
    const saved = await files.put(runId, name, text, { description: `Report: ${title}`, contentType: format === "html" ? "text/html" : "text/markdown", idempotencyKey });
    return `Saved the report ${saved.name} (${saved.bytes} bytes, ${saved.contentType}).`;
  },
});
