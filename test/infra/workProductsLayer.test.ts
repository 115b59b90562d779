import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildSync } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { installedVersion, RESVG } from "../../infra/aws/layerBinaries.js";
import { buildLayer } from "../../infra/aws/workProductsLayer.js";

/**
 * The agents' layer of work-product libraries, loaded as a Lambda loads it: from a folder with no
 * node_modules, the layer's on NODE_PATH, through shared/lazyImport.ts's fallback. (The PNG
 * renderer ships its Linux arm64 binary, which only its presence checks here.)
 */
const work = mkdtempSync(path.join(tmpdir(), "stepwise-layer-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the work products' layer", () => {
  it("holds each library, and each loads through NODE_PATH and works", () => {
    const modules = path.join(work, "opt/nodejs/node_modules");
    buildLayer(modules);
    // The helper as the function's bundle holds it: in a folder with no node_modules above it.
    buildSync({
      entryPoints: ["shared/lazyImport.ts"],
      bundle: true,
      platform: "node",
      format: "esm",
      outfile: path.join(work, "task/lazyImport.mjs"),
      logLevel: "error",
    });
    const script = path.join(work, "task/index.mjs");
    writeFileSync(
      script,
      `import { lazyImport } from "./lazyImport.mjs";
const load = (name) => lazyImport(() => import(name), name);
const ExcelJS = (await load("exceljs")).default;
const book = new ExcelJS.Workbook(); book.addWorksheet("Sales").addRow(["north", 220]);
const read = new ExcelJS.Workbook(); await read.xlsx.load(await book.xlsx.writeBuffer());
const XLSX = await load("@e965/xlsx");
const legacy = XLSX.read(XLSX.write(XLSX.utils.book_new(XLSX.utils.aoa_to_sheet([["south", 80]]), "Legacy"), { type: "buffer", bookType: "xls" }));
const { parse } = await load("csv-parse");
const csv = await new Promise((resolve, reject) => parse('a,"b, c"\\n', (error, rows) => (error ? reject(error) : resolve(rows))));
const mammoth = (await load("mammoth")).default;
const { extractText } = await load("unpdf");
const [vega, vegaLite] = [await load("vega"), await load("vega-lite")];
const spec = vegaLite.compile({ data: { values: [{ r: "north", v: 220 }] }, mark: "bar", encoding: { x: { field: "r", type: "nominal" }, y: { field: "v", type: "quantitative" } } }).spec;
const svg = await new vega.View(vega.parse(spec), { renderer: "none" }).toSVG();
const Pptx = (await load("pptxgenjs")).default;
const deck = new Pptx(); deck.addSlide().addText("Q1", { x: 1, y: 1 });
const pptx = await deck.write({ outputType: "nodebuffer" });
const { parseHTML } = await load("linkedom");
const { Readability } = (await load("@mozilla/readability")).default;
const Turndown = (await load("turndown")).default;
const page = parseHTML("<html><head><title>Q1</title></head><body><article><h1>Sales</h1><p>North sold 220 units this quarter, the most of any region, and south sold 80.</p></article></body></html>");
const article = new Readability(page.document).parse();
const markdown = new Turndown({ headingStyle: "atx" }).turndown("<h1>Sales</h1><p>North: <b>220</b></p>");
console.log(JSON.stringify({ sheet: read.worksheets[0].name, legacy: legacy.SheetNames[0], csv, mammoth: typeof mammoth.convertToHtml, unpdf: typeof extractText, bar: svg.includes('aria-label="r: north; v: 220"'), pptx: pptx.subarray(0, 2).toString(), readable: article.textContent.includes("North sold 220"), markdown }));
`,
    );
    const run = spawnSync(process.execPath, [script], {
      cwd: work,
      encoding: "utf8",
      env: { ...process.env, NODE_PATH: modules },
      timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split("\n").at(-1)!)).toEqual({
      sheet: "Sales",
      legacy: "Legacy",
      csv: [["a", "b, c"]],
      mammoth: "function",
      unpdf: "function",
      bar: true,
      pptx: "PK",
      readable: true,
      markdown: "# Sales\n\nNorth: **220**",
    });
    expect(spawnSync("ls", [path.join(modules, "@resvg")], { encoding: "utf8" }).stdout.split("\n")).toEqual(
      expect.arrayContaining(["resvg-js", "resvg-js-linux-arm64-gnu"]),
    );
  }, 240_000);

  it("without resvg's Linux arm64 binary (fetched at install), building it fails at once, naming the package and the command; it installs nothing", () => {
    const empty = mkdtempSync(path.join(work, "no-binaries-"));
    const modules = path.join(work, "unbuilt/nodejs/node_modules");
    expect(() => buildLayer(modules, empty)).toThrow(
      new RegExp(`needs @resvg/resvg-js@${installedVersion(RESVG)} for Linux arm64 .*missing.*npm run fetch:binaries`),
    );
    // Nothing was fetched into the folder it looked in.
    expect(readdirSync(empty)).toEqual([]);
  });
});
