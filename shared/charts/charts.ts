import { createRequire } from "node:module";
import * as z from "zod";
import { DocumentError, documentKind, readSheets, sheetCsv } from "../documents/documents.js";
import { lazyImport } from "../lazyImport.js";
import { type FileStore, fileText } from "../ports/files.js";

/**
 * Charts: a Vega-Lite spec over a run file (CSV, JSON, a workbook's sheet) or inline values,
 * compiled by vega-lite and rendered to SVG by vega on the server (no browser, no canvas), and to
 * PNG by resvg (a native renderer shipped in its npm package) for slides. The libraries are loaded
 * on first use.
 */

/** What one chart may take; past these it is refused with the limit. */
export const CHART_LIMITS = { maxRows: 50_000, maxSpecChars: 100_000, maxSide: 2_000 } as const;

/** The font every chart is drawn in (SVG names it; the PNG renderer is given its file). */
const FONT = "Inter";

export const ChartInput = z.object({
  title: z.string().min(1).max(200),
  spec: z
    .record(z.string(), z.unknown())
    .describe(
      "A Vega-Lite spec (mark, encoding, …) without `data`: the data comes from `data` (a file of the run) or the spec's own `data: {values: […]}`",
    ),
  data: z
    .string()
    .min(1)
    .max(120)
    .optional()
    .describe("A file of the run to chart: .csv, .json (an array of objects) or .xlsx/.xls (its first sheet, or `sheet`)"),
  sheet: z.string().max(100).optional().describe("The sheet of an .xlsx or .xls file (default: the first)"),
});
export type ChartInput = z.infer<typeof ChartInput>;

/** A chart as drawn: its SVG, and how many data marks (bars, points, …) it has. */
export interface RenderedChart {
  title: string;
  svg: string;
  marks: number;
}

/** A spec or its data that cannot be drawn: the message says why, for the model to correct. */
export class ChartError extends Error {}

/** Draws the chart as SVG, its data read from the run's files when it names one. */
export async function renderChart(input: ChartInput, runId: string, files: FileStore): Promise<RenderedChart> {
  if (JSON.stringify(input.spec).length > CHART_LIMITS.maxSpecChars)
    throw new ChartError(`the spec is longer than ${CHART_LIMITS.maxSpecChars} characters`);
  if (hasUrl(input.spec)) throw new ChartError("a chart reads a file of the run (`data`) or inline values, never a URL");
  const values = input.data ? await fileRows(input.data, input.sheet, runId, files) : undefined;
  const inline = (input.spec.data as { values?: unknown } | undefined)?.values;
  if (!values && !Array.isArray(inline)) throw new ChartError("give the data: `data` (a file of the run) or `spec.data.values`");
  const rows = values ?? (inline as unknown[]);
  if (rows.length > CHART_LIMITS.maxRows)
    throw new ChartError(`the data has ${rows.length} rows; a chart takes at most ${CHART_LIMITS.maxRows}`);
  for (const side of ["width", "height"] as const) {
    const size = input.spec[side];
    if (typeof size === "number" && size > CHART_LIMITS.maxSide) throw new ChartError(`${side} ${size} is over ${CHART_LIMITS.maxSide}`);
  }
  const [vega, vegaLite] = await Promise.all([
    lazyImport(() => import("vega"), "vega"),
    lazyImport(() => import("vega-lite"), "vega-lite"),
  ]);
  // A single view gets a size that reads well on a page and a slide; a composed one sizes its parts.
  const single = "mark" in input.spec;
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: input.title,
    ...(single ? { width: 560, height: 320 } : {}),
    ...input.spec,
    data: { values: rows },
    // A reader without Inter (an SVG opened on its own) gets a sans-serif face, not a serif default.
    config: {
      font: `${FONT}, Helvetica, Arial, sans-serif`,
      ...(single && labelsFit(input.spec, rows) ? { axisX: { labelAngle: 0 } } : {}),
      ...(input.spec.config as object | undefined),
    },
  };
  let svg: string;
  try {
    const compiled = vegaLite.compile(spec as never).spec;
    // No loader can fetch anything: an image mark or a lookup naming a URL fails instead.
    const loader = vega.loader();
    loader.sanitize = async (uri: string) => {
      throw new ChartError(`a chart loads nothing (it named ${uri.slice(0, 100)})`);
    };
    const view = new vega.View(vega.parse(compiled), { renderer: "none", loader });
    svg = await view.toSVG();
    view.finalize();
  } catch (error) {
    throw error instanceof ChartError
      ? error
      : new ChartError(`the Vega-Lite spec cannot be drawn: ${(error as Error).message.slice(0, 300)}`);
  }
  return { title: input.title, svg, marks: countMarks(svg) };
}

/**
 * Whether a single view's x labels (a category axis) fit side by side at the chart's width, so
 * they read level instead of turned 90° (Vega-Lite's default for categories): about 7 px a
 * character at the axis' 10 px, and a gap.
 */
function labelsFit(spec: Record<string, unknown>, rows: unknown[]): boolean {
  const x = (spec.encoding as { x?: { field?: unknown; type?: unknown } } | undefined)?.x;
  if (typeof x?.field !== "string" || (x.type !== "nominal" && x.type !== "ordinal")) return false;
  const field = x.field;
  const labels = new Set(rows.map((row) => String((row as Record<string, unknown>)[field] ?? "")));
  const width = typeof spec.width === "number" ? spec.width : 560;
  return [...labels].reduce((sum, label) => sum + label.length * 7 + 12, 0) <= width;
}

/** The data marks of an SVG vega drew: the items of each mark group whose role is a mark (not an axis, legend or title). */
function countMarks(svg: string): number {
  let count = 0;
  for (const group of svg.matchAll(/<g class="mark-(\w+) role-mark[^"]*"[^>]*>([\s\S]*?)<\/g>/g)) {
    const element = group[1] === "rect" ? "path" : group[1] === "symbol" ? "path" : group[1];
    count += group[2].split(`<${element}`).length - 1;
  }
  return count;
}

/** PNG bytes of an SVG, drawn in the charts' font (no system fonts: the same picture everywhere). */
export async function svgToPng(svg: string, width = 1200): Promise<Uint8Array> {
  const { Resvg } = await lazyImport(() => import("@resvg/resvg-js"), "@resvg/resvg-js");
  const resvg = new Resvg(svg, {
    fitTo: { mode: "width", value: width },
    background: "white",
    font: { fontFiles: [fontFile()], loadSystemFonts: false, defaultFontFamily: FONT, sansSerifFamily: FONT },
  });
  return resvg.render().asPng();
}

/** The font's file, from its package (on AWS in the agents' layer, which require() finds on NODE_PATH). */
let fontPath: string | undefined;
const fontFile = () => (fontPath ??= createRequire(import.meta.url).resolve("@expo-google-fonts/inter/400Regular/Inter_400Regular.ttf"));

/** A run file's rows as objects: CSV (numbers parsed), a JSON array, or a workbook's sheet (header row first). */
async function fileRows(name: string, sheet: string | undefined, runId: string, files: FileStore): Promise<unknown[]> {
  const file = await files.get(runId, name);
  if (!file) throw new ChartError(`no file named ${name}. Files: ${(await files.list(runId)).map((f) => f.name).join(", ") || "none"}`);
  const vega = await lazyImport(() => import("vega"), "vega");
  if (documentKind(name) === "workbook") {
    let sheets: Awaited<ReturnType<typeof readSheets>>;
    try {
      sheets = await readSheets(name, file.body);
    } catch (error) {
      throw new ChartError(error instanceof DocumentError ? error.message : String(error));
    }
    const chosen = sheet === undefined ? sheets[0] : sheets.find((s) => s.name === sheet);
    if (!chosen) throw new ChartError(`${name} has no sheet ${sheet}. Sheets: ${sheets.map((s) => s.name).join(", ")}`);
    return vega.read(sheetCsv(chosen), { type: "csv", parse: "auto" });
  }
  if (/\.json$/i.test(name)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fileText(file));
    } catch {
      throw new ChartError(`${name} is not valid JSON`);
    }
    if (!Array.isArray(parsed)) throw new ChartError(`${name} is not a JSON array of rows`);
    return parsed;
  }
  if (/\.(csv|tsv)$/i.test(name)) return vega.read(fileText(file), { type: /\.tsv$/i.test(name) ? "tsv" : "csv", parse: "auto" });
  throw new ChartError(`${name} is not a CSV, JSON or Excel (.xlsx, .xls) file`);
}

/** Whether the spec names a URL anywhere (data, images, lookups). */
function hasUrl(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasUrl);
  if (value && typeof value === "object") return Object.entries(value).some(([key, inner]) => key === "url" || hasUrl(inner));
  return false;
}
