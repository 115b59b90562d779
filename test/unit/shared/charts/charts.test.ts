import { describe, expect, it } from "vitest";
import { CHART_LIMITS, renderChart, svgToPng } from "../../../../shared/charts/charts.js";
import { fileText } from "../../../../shared/ports/files.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { chartTool } from "../../../../shared/tools/chart.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { writeReport } from "../../../../shared/tools/writeReport.js";
import { legacyWorkbook, salesWorkbook } from "../../../support/documents.js";

/** Charts drawn on the server: Vega-Lite over a run file or inline values → SVG (vega) and PNG (resvg). */
const bars = {
  mark: "bar",
  encoding: { x: { field: "region", type: "nominal" }, y: { field: "amount", type: "quantitative", aggregate: "sum" } },
};
/** The bars of a drawn SVG, as vega labels them for screen readers (sorted: bars come in the order of the data). */
const barLabels = (svg: string) =>
  [...svg.matchAll(/<path aria-label="([^"]+)" role="graphics-symbol" aria-roledescription="bar"/g)].map((m) => m[1]).sort();

async function runFiles() {
  const files = new MemoryFileStore();
  await files.put("run_c", "sales.csv", "region,amount\nnorth,120.5\nsouth,80\nnorth,99.5\nsouth,100\neast,50\n");
  await files.put("run_c", "sales.xlsx", await salesWorkbook());
  await files.put("run_c", "sales.xls", legacyWorkbook());
  await files.put("run_c", "rows.json", JSON.stringify([{ region: "west", amount: 7 }]));
  return files;
}

describe("charts", () => {
  it.each([
    [
      "a CSV file",
      { data: "sales.csv" },
      ["region: east; Sum of amount: 50", "region: north; Sum of amount: 220", "region: south; Sum of amount: 180"],
    ],
    [
      "a workbook's first sheet",
      { data: "sales.xlsx" },
      ["region: east; Sum of amount: 50", "region: north; Sum of amount: 220", "region: south; Sum of amount: 180"],
    ],
    [
      "an Excel 97–2003 workbook's sheet",
      { data: "sales.xls", sheet: "Sales" },
      [
        "region: east; Sum of amount: 50",
        "region: north; Sum of amount: 220",
        "region: south; Sum of amount: 180",
        "region: total; Sum of amount: 450",
      ],
    ],
    ["a JSON array", { data: "rows.json" }, ["region: west; Sum of amount: 7"]],
  ])("draws %s: the SVG has one bar per region with its total", async (_, data, labels) => {
    const chart = await renderChart({ title: "Sales", spec: bars, ...data }, "run_c", await runFiles());
    expect(barLabels(chart.svg)).toEqual(labels);
    expect(chart.marks).toBe(labels.length);
    expect(chart.svg).toContain("Sales</text>");
  });

  it("draws inline values, and a PNG of it", async () => {
    const chart = await renderChart(
      {
        title: "Inline",
        spec: {
          ...bars,
          data: {
            values: [
              { region: "a", amount: 1 },
              { region: "b", amount: 2 },
            ],
          },
        },
      },
      "run_c",
      new MemoryFileStore(),
    );
    expect(barLabels(chart.svg)).toEqual(["region: a; Sum of amount: 1", "region: b; Sum of amount: 2"]);
    const png = Buffer.from(await svgToPng(chart.svg));
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.readUInt32BE(16)).toBe(1200); // IHDR width
  });

  it.each([
    ["a URL for data", { spec: { ...bars, data: { url: "https://example.com/x.csv" } } }, /never a URL/],
    ["no data", { spec: bars }, /give the data/],
    ["a missing file", { spec: bars, data: "nope.csv" }, /no file named nope\.csv/],
    ["a sheet that is not there", { spec: bars, data: "sales.xlsx", sheet: "Q9" }, /sales\.xlsx has no sheet Q9\. Sheets: Sales, Notes/],
    ["a mark vega does not know", { spec: { ...bars, mark: "blob" }, data: "sales.csv" }, /cannot be drawn/],
    ["a size past the limit", { spec: { ...bars, width: CHART_LIMITS.maxSide + 1 }, data: "sales.csv" }, /width 2001 is over 2000/],
  ])("%s is a tool error that says why, and saves nothing", async (_, args, message) => {
    const files = await runFiles();
    const before = files.writes.length;
    const outcome = await new ToolRegistry([chartTool]).execute(
      { id: "c1", name: "chart", arguments: JSON.stringify({ title: "Sales", ...args }) },
      testToolContext({ runId: "run_c", files }),
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(message);
    expect(files.writes.length).toBe(before);
  });

  it("the chart tool saves the chart as SVG and PNG files of the run", async () => {
    const files = await runFiles();
    const output = await chartTool.run(
      chartTool.parameters.parse({ title: "Sales by region", spec: bars, data: "sales.csv" }),
      testToolContext({ runId: "run_c", files }),
    );
    expect(output).toMatch(/^Saved the chart sales-by-region\.svg \(\d+ bytes\) and sales-by-region\.png \(\d+ bytes\): 3 data marks\.$/);
    expect((await files.get("run_c", "sales-by-region.svg"))!.contentType).toBe("image/svg+xml");
    expect((await files.get("run_c", "sales-by-region.png"))!.contentType).toBe("image/png");
  });

  it("write_report embeds its charts in an HTML report as pictures drawn in the bundled font, at the chart's width, scaling down", async () => {
    const files = await runFiles();
    await writeReport.run(
      writeReport.parameters.parse({
        title: "Q1",
        content: "## Totals\n\nNorth leads.",
        charts: [{ title: "By region", spec: bars, data: "sales.csv" }],
      }),
      testToolContext({ runId: "run_c", files }),
    );
    const html = fileText((await files.get("run_c", "q1.html"))!);
    const image =
      /<figure class="chart"><img alt="By region" width="(\d+)" src="data:image\/png;base64,([^"]+)"><figcaption>By region<\/figcaption><\/figure>/.exec(
        html,
      );
    expect(image).not.toBeNull();
    const chart = await renderChart({ title: "By region", spec: bars, data: "sales.csv" }, "run_c", files);
    expect(Number(image![1])).toBe(Math.round(Number(/<svg[^>]*\swidth="([\d.]+)"/.exec(chart.svg)![1])));
    // The same picture svgToPng draws with Inter, at twice the width for sharp screens.
    expect(Buffer.from(image![2]!, "base64").equals(Buffer.from(await svgToPng(chart.svg)))).toBe(true);
    // Images and tables never widen the page they are on.
    expect(html).toMatch(/img\{max-width:100%;height:auto\}/);
    expect(html).toMatch(/table\{[^}]*overflow-x:auto/);
    // Opened on its own, the SVG names Inter, then sans-serif faces (never a serif default).
    expect(chart.svg).toContain('font-family="Inter, Helvetica, Arial, sans-serif"');
  });
});
