import { ChartInput, renderChart, svgToPng } from "../charts/charts.js";
import { slugOf } from "../ports/files.js";
import { defineTool } from "./tool.js";

/** A chart an agent makes on its own: drawn on the server and saved as SVG (for pages) and PNG (for slides and chats). */
export const chartTool = defineTool({
  name: "chart",
  persona: "Data visualizer",
  description:
    "Draw a chart from a Vega-Lite spec (mark, encoding, transform, …) over a file of the run (`data`: .csv, .json, .xlsx or .xls) or the spec's inline `data.values`. " +
    "Saved as <title>.svg and <title>.png files of the run; write_report can embed the same chart (its `charts`).",
  access: "write",
  idempotent: true, // both files are put with the call's idempotency key
  grants: ["files:read", "files:write"],
  parameters: ChartInput,
  async run(input, { runId, files, idempotencyKey }) {
    const chart = await renderChart(input, runId, files);
    const name = slugOf(input.title, "chart");
    const svg = await files.put(runId, `${name}.svg`, chart.svg, { description: `Chart: ${input.title}`, idempotencyKey });
    const png = await files.put(runId, `${name}.png`, await svgToPng(chart.svg), { description: `Chart: ${input.title}`, idempotencyKey });
    return `Saved the chart ${svg.name} (${svg.bytes} bytes) and ${png.name} (${png.bytes} bytes): ${chart.marks} data marks.`;
  },
});
