import xssModule from "xss";

// A CommonJS package: its named exports hang off the default export at run time.
const xss = xssModule as unknown as typeof import("xss");

import * as z from "zod";
import { ChartInput, type RenderedChart, renderChart, svgToPng } from "../charts/charts.js";
import { readableText } from "../documents/documents.js";
import { DeltaCoalescer } from "../llm/deltaCoalescer.js";
import { type FileStore, slugOf } from "../ports/files.js";
import type { ToolContext } from "../ports/tools.js";
import { escapeHtml } from "../reports/html.js";
import { outline, pptxOf, slidesHtml } from "../reports/slides.js";
import { markdown as markdownDialect } from "../text/markdown.js";
import { defineTool } from "./tool.js";

const Source = z.object({ url: z.string().url().max(2_000), title: z.string().max(300).optional() });
export type Source = z.infer<typeof Source>;

/** Only markup a report needs; scripts, styles, frames, forms and event handlers are dropped whole. */
const sanitizer = new xss.FilterXSS({
  whiteList: { ...xss.getDefaultWhiteList(), h1: ["id"], h2: ["id"], h3: ["id"], h4: ["id"], input: [] },
  stripIgnoreTag: true,
  stripIgnoreTagBody: ["script", "style", "iframe", "object", "embed", "noscript", "template"],
});

const STYLE = `body{font:16px/1.6 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
h1,h2,h3{line-height:1.25}h1{border-bottom:1px solid #d0d7de;padding-bottom:.3em}
table{border-collapse:collapse;margin:1rem 0;display:block;max-width:100%;overflow-x:auto}th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}th{background:#f6f8fa}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;border-radius:4px}pre{padding:.8rem;overflow:auto}code{padding:.1em .3em}
blockquote{margin:0;padding:0 1rem;color:#59636e;border-left:.25em solid #d0d7de}ol.sources{font-size:.9em;color:#59636e}a{color:#0969da}
img{max-width:100%;height:auto}figure.chart{margin:1.5rem 0}figcaption{font-size:.9em;color:#59636e}`;

/** Markdown → one self-contained HTML page: sanitized, inline CSS, no scripts (the CSP forbids them too). */
function renderHtmlReport(title: string, markdown: string, sources: Source[] = [], charts: DrawnChart[] = []): string {
  const body = sanitizer.process(markdownDialect.parse(markdown) as string);
  // Charts are drawn by us (never the model's markup): embedded as PNG images, which the CSP allows as
  // data: URLs, drawn with the bundled font (an SVG as an image cannot load it: its text would fall
  // back to whatever font the reader has); shown at the chart's own width, or narrower on a small screen.
  const figures = charts.length
    ? `<h2>Charts</h2>\n${charts.map((c) => `<figure class="chart"><img alt="${escapeHtml(c.title)}" width="${c.width}" src="data:image/png;base64,${Buffer.from(c.png).toString("base64")}"><figcaption>${escapeHtml(c.title)}</figcaption></figure>`).join("\n")}`
    : "";
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
${figures}
${list}
</body>
</html>
`;
}

/** Markdown as written, its charts as images (files saved beside it), the sources as a numbered list at the end. */
function renderMarkdownReport(
  title: string,
  markdown: string,
  sources: Source[] = [],
  chartFiles: { title: string; name: string }[] = [],
): string {
  const heading = /^\s*#\s/.test(markdown) ? "" : `# ${title}\n\n`;
  const figures = chartFiles.length
    ? `\n\n## Charts\n\n${chartFiles.map((c) => `![${c.title.replace(/[[\]]/g, "")}](${encodeURI(c.name)})`).join("\n\n")}`
    : "";
  const list = sources.length
    ? `\n\n## Sources\n\n${sources.map((s, i) => `${i + 1}. [${s.title ?? s.url}](${s.url})`).join("\n")}\n`
    : "\n";
  return `${heading}${markdown.trimEnd()}${figures}${list}`;
}

/** A file name from the title: lowercase words joined by '-'. */
function reportFileName(title: string, format: "markdown" | "html" | "pptx"): string {
  return `${slugOf(title, "report")}.${format === "markdown" ? "md" : format}`;
}

/** The web page of a deck's slides, saved beside it: `deck.pptx` → `deck.slides.html`. */
function slidesPreviewName(deck: string): string {
  return deck.replace(/\.pptx$/, ".slides.html");
}

/** What a report written from a task may be given to read: each file, and all of it together, at most this many characters. */
const MATERIAL_LIMITS = { perFile: 30_000, total: 60_000 } as const;

/** The report writer's instructions (the offline model knows a report request by its first line). */
const REPORT_WRITER_PROMPT = [
  "You are a report writer. Write the report the task asks for, in Markdown, from the material given and nothing else.",
  "Start with a short summary; give each part a '## ' heading; put figures in tables; keep every figure as the material states it.",
  "Write only the report: no title line (it is added), no preamble, no closing remarks.",
].join("\n");

/** JD Genie's report tool: the run's deliverable as a Markdown or a self-contained HTML file, given finished or written live. */
export const writeReport = defineTool({
  name: "write_report",
  description:
    "Write the final report of the run as a file: format 'html' (a self-contained web page rendered from Markdown), 'markdown', " +
    "or 'pptx' (a PowerPoint deck: a title slide, a slide per '## ' section with its bullets, each chart on a slide, the section's text as speaker notes). " +
    "Either give the finished report in `content` (Markdown), or give `task` (what the report must cover) with the material to use — " +
    "`material` (names of the run's files; spreadsheets, Word documents and PDFs are read too) and `notes` (earlier results, figures) — " +
    "and the report is written from them as the user watches. Give the sources you used (URLs) to list them, numbered, at the end.",
  access: "write",
  idempotent: true, // the report is put with the call's idempotency key
  // Reads the material and the charts' data, writes the report (and a deck's slides page, a Markdown report's charts).
  grants: ["files:read", "files:write"],
  parameters: z.object({
    title: z.string().min(1).max(200),
    format: z.enum(["markdown", "html", "pptx"]).default("html"),
    content: z.string().min(1).max(300_000).optional().describe("The finished report in Markdown"),
    task: z
      .string()
      .min(1)
      .max(4_000)
      .optional()
      .describe("What the report must cover, to have it written from the material (in place of content)"),
    material: z.array(z.string().min(1).max(120)).max(20).optional().describe("Names of the run's files to write from"),
    notes: z.string().max(100_000).optional().describe("Earlier results and figures to write from"),
    sources: z.array(Source).max(50).optional(),
    charts: z.array(ChartInput).max(10).optional().describe("Charts to include, each as the chart tool takes it"),
  }),
  async run({ title, format, content, task, material, notes, sources, charts = [] }, context) {
    const name = reportFileName(title, format);
    if (content === undefined && task === undefined)
      throw new Error("give either content (the finished report) or task (what to write, with material or notes)");
    // Drawn first: a chart that cannot be drawn fails the call before the model writes anything.
    const drawn = await Promise.all(charts.map((chart) => renderChart(chart, context.runId, context.files)));
    const written = content ?? (await writeLive({ name, format, title, task: task ?? "", material: material ?? [], notes }, context));
    // A report is text people read: it passes the run's output checks (redacted, or the call fails when blocked).
    const markdown = context.output ? await context.output.shown(written) : written;
    const { runId, files, idempotencyKey } = context;
    const put = (file: string, body: string | Uint8Array, contentType?: string, description = `Report: ${title}`) =>
      files.put(runId, file, body, { description, contentType, idempotencyKey });
    let saved: Awaited<ReturnType<typeof put>>;
    if (format === "html")
      saved = await put(name, renderHtmlReport(title, markdown, sources, await Promise.all(drawn.map(asPng))), "text/html");
    else if (format === "pptx") {
      const sourceList = sources?.length
        ? `\n\n## Sources\n\n${sources.map((s, i) => `${i + 1}. ${s.title ? `${s.title}: ` : ""}${s.url}`).join("\n")}`
        : "";
      const charted = await Promise.all(drawn.map(async (chart) => ({ title: chart.title, png: await svgToPng(chart.svg) })));
      const slides = outline(title, markdown + sourceList, charted);
      saved = await put(name, await pptxOf(title, slides));
      // What a preview shows of the deck (the console's, a browser's): the same slides as a web page.
      await put(slidesPreviewName(name), slidesHtml(title, slides), "text/html", `Slides of ${name}, as a web page`);
    } else {
      const chartFiles = [];
      for (const [i, chart] of drawn.entries()) {
        const file = await put(`${name.replace(/\.md$/, "")}-chart-${i + 1}.svg`, chart.svg, undefined, `Chart: ${chart.title}`);
        chartFiles.push({ title: chart.title, name: file.name });
      }
      saved = await put(name, renderMarkdownReport(title, markdown, sources, chartFiles), "text/markdown");
    }
    return `Saved the report ${saved.name} (${saved.bytes} bytes, ${saved.contentType}).`;
  },
});

/** A chart as a picture in the bundled font, with the width it was drawn at (CSS pixels). */
interface DrawnChart {
  title: string;
  png: Uint8Array;
  width: number;
}

async function asPng(chart: RenderedChart): Promise<DrawnChart> {
  const width = Number(/<svg[^>]*\swidth="([\d.]+)"/.exec(chart.svg)?.[1] ?? 600);
  return { title: chart.title, png: await svgToPng(chart.svg), width: Math.round(width) };
}

interface LiveReport {
  name: string;
  format: string;
  title: string;
  task: string;
  material: string[];
  notes?: string;
}

/** Has the run's model write the report from the material, streaming it as report.delta events as it comes. */
async function writeLive(report: LiveReport, { runId, files, model, progress, signal, output, modelWaits }: ToolContext): Promise<string> {
  if (!model) throw new Error("this agent has no model to write with: give the finished report in content");
  const deltas = new DeltaCoalescer((text) =>
    progress?.({ type: "report.delta", data: { name: report.name, format: report.format, text } }),
  );
  // The stream passes the same hold-back window as an agent's: a redacted or blocked span never reaches a client.
  const held = output?.holdBack(deltas.push);
  // Its retries are told as the agent's own model calls' are (model.retrying, the run's wait, its subscribers).
  const waits = modelWaits?.();
  let retried: Promise<unknown> = Promise.resolve();
  try {
    const reply = await model.complete({
      role: "executor",
      messages: [
        { role: "system", content: REPORT_WRITER_PROMPT },
        { role: "user", content: await writerRequest(report, runId, files) },
      ],
      onText: held ? held.push : deltas.push,
      // A reply that broke off is retried whole: what it streamed is withdrawn, after its last written piece.
      onRetry: (retry) => {
        const { reason } = retry;
        held?.discard();
        const { pushed, written } = deltas.discard();
        if (pushed) void written.then(() => progress?.({ type: "report.withdrawn", data: { name: report.name, reason } }));
        retried = waits?.retried(retry, { before: retried }) ?? retried;
      },
      signal,
    });
    if (!reply.content?.trim()) throw new Error("the model wrote an empty report");
    return reply.content;
  } finally {
    held?.close();
    await Promise.all([deltas.close(), retried]);
    await waits?.close();
  }
}

/** The writer's request: title, task, notes, then each file of the material as text (documents as Markdown), within the limits. */
async function writerRequest(report: LiveReport, runId: string, files: FileStore): Promise<string> {
  const parts = [`Title: ${report.title}`, `Task: ${report.task}`];
  let budget: number = MATERIAL_LIMITS.total;
  const take = (text: string, limit: number) => {
    const kept =
      text.length <= Math.min(limit, budget) ? text : `${text.slice(0, Math.min(limit, budget))}\n[cut: ${text.length} characters in all]`;
    budget = Math.max(0, budget - kept.length);
    return kept;
  };
  if (report.notes?.trim()) parts.push(`Notes:\n${take(report.notes.trim(), MATERIAL_LIMITS.total)}`);
  for (const name of report.material) {
    const file = await files.get(runId, name);
    if (!file)
      throw new Error(`no file named ${name} to write from. Files: ${(await files.list(runId)).map((f) => f.name).join(", ") || "none"}`);
    parts.push(`Material: ${name}\n${take(await readableText(runId, file), MATERIAL_LIMITS.perFile)}`);
  }
  return parts.join("\n\n");
}
