import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import JSZip from "jszip";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventPage } from "../../shared/apiClient/client.js";
import { Client } from "../support/client.js";
import { legacyWorkbook, pdfDocument, salesWorkbook } from "../support/documents.js";
import { libreOffice, pdfPages } from "../support/libreoffice.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * The work products through the whole local stack with the offline model: an uploaded workbook
 * becomes an HTML report and a PowerPoint deck with a chart (the code shown as it runs, the report
 * as it is written), an uploaded PDF is summarized, and a deep search over the run's files keeps
 * its notes.
 */
let stack: RunningStack;
let main: Client;
const work = mkdtempSync(path.join(tmpdir(), "stepwise-work-products-"));

/** Each test's run, submitted together at the start: they are independent, so they run side by side. */
let runs: Record<"xlsx" | "xls" | "pdf" | "search", Promise<string>>;

beforeAll(async () => {
  stack = await startStack({ WEB_SEARCH_PROVIDER: "files" }, []);
  main = new Client(stack.url, stack.apiKey);
  const submit = async (file: Promise<string>, input: string) =>
    (await main.submit({ input, mode: "plan_solve", files: [await file] })).runId;
  runs = {
    xlsx: submit(
      upload("sales.xlsx", await salesWorkbook(), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
      "Analyse the attached spreadsheet and write an HTML report and slides with a chart of the totals",
    ),
    xls: submit(upload("sales.xls", legacyWorkbook(), "application/vnd.ms-excel"), "Analyse the attached spreadsheet"),
    pdf: submit(
      upload("brief.pdf", pdfDocument(["Revenue rose 12 percent in Q3", "Costs fell in Q4"]), "application/pdf"),
      "Summarize the attached PDF",
    ),
    search: submit(
      upload(
        "energy.md",
        new TextEncoder().encode("# Energy\n\nSolar power capacity grew by 30 percent in 2026.\n\nWind power grew too.\n"),
        "text/markdown",
      ),
      "Research how fast solar power capacity grew",
    ),
  };
  // A failed upload or submit is reported by the test that awaits it.
  for (const run of Object.values(runs)) run.catch(() => undefined);
});

afterAll(async () => {
  await stack?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function upload(name: string, body: Uint8Array, type: string) {
  const res = await fetch(`${stack.url}/v1/files?name=${name}`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": type },
    body,
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { fileId: string }).fileId;
}

async function download(runId: string, name: string): Promise<Buffer> {
  const res = await fetch(`${stack.url}/v1/runs/${runId}/files/${encodeURIComponent(name)}`, {
    headers: { authorization: `Bearer ${stack.apiKey}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

const events = async (runId: string) => (await main.request<EventPage>("GET", `/v1/runs/${runId}/events?limit=500`)).body.events as any[];

describe("work products in runs", { timeout: 300_000 }, () => {
  it("an uploaded .xlsx becomes an HTML report and a .pptx deck with a chart, written live", async () => {
    const runId = await runs.xlsx;
    const run = await main.waitFor(runId, undefined, 240_000);
    expect(run.status).toBe("succeeded");
    const log = await events(runId);

    // The code ran over the sheet's CSV: the code, then its output, before the call's result.
    const result = log.find((e) => e.type === "tool.result" && e.data.tool === "run_code");
    const code = log.filter((e) => e.type === "code" && e.data.callId === result.data.callId);
    expect(code.map((e) => e.data.part)).toEqual(["source", "output"]);
    expect(code[1].seq).toBeLessThan(result.seq);
    expect(result.data.output).toContain("### sales.Sales.csv: 5 rows, 3 columns (region, month, amount)");

    // Both reports were written live: their deltas before their files.
    for (const name of ["data-analysis-report.html", "data-analysis-report.pptx"]) {
      const created = log.find((e) => e.type === "file.created" && e.data.name === name);
      const deltas = log.filter((e) => e.type === "report.delta" && e.data.name === name);
      expect(deltas.length, name).toBeGreaterThan(0);
      expect(deltas.every((e) => e.seq < created.seq)).toBe(true);
    }

    // The HTML report embeds the chart: a picture drawn in the bundled font.
    const html = (await download(runId, "data-analysis-report.html")).toString();
    const png = Buffer.from(/<img alt="amount by region" width="\d+" src="data:image\/png;base64,([^"]+)"/.exec(html)![1]!, "base64");
    expect(png.subarray(1, 4).toString()).toBe("PNG");

    // The deck: titles in the slide XML, the chart's image on its own slide.
    const pptx = await download(runId, "data-analysis-report.pptx");
    const zip = await JSZip.loadAsync(pptx);
    const slideNames = Object.keys(zip.files)
      .filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n))
      .sort((a, b) => Number(/\d+/.exec(a)) - Number(/\d+/.exec(b)));
    const titles = await Promise.all(slideNames.map(async (n) => /<a:t>([^<]*)<\/a:t>/.exec(await zip.file(n)!.async("string"))?.[1]));
    expect(titles[0]).toBe("Data analysis report");
    expect(titles).toContain("Summary");
    expect(titles.at(-1)).toBe("amount by region");
    expect(await zip.file(slideNames.at(-1)!)!.async("string")).toContain("<p:pic>");
    expect(Object.keys(zip.files).some((n) => /^ppt\/media\/.+\.png$/.test(n))).toBe(true);
    expect(run.files.map((f: any) => f.name)).toContain("data-analysis-report.slides.html");

    // LibreOffice opens the walk-through's deck and prints each slide, then each slide's notes: read every page.
    const office = libreOffice();
    if ("missing" in office) return console.log(`LibreOffice part skipped: ${office.missing}`);
    const input = path.join(work, "deck.pptx");
    writeFileSync(input, pptx);
    const pages = await pdfPages(office.soffice, input);
    expect(pages).toHaveLength(2 * slideNames.length);
    const slidePages = pages.slice(0, slideNames.length);
    const notesPages = pages.slice(slideNames.length);
    for (const [i, page] of slidePages.entries()) expect(page.startsWith(titles[i]!), page).toBe(true);
    // Underscores as written (the run_code task, the sheet's file names); no Markdown marks left.
    expect(slidePages.join(" ")).toContain("run_code");
    expect(slidePages.join(" ")).toContain("sales.Sales.csv");
    expect(slidePages.join(" ")).not.toMatch(/\*\*|runcode|\|---/);
    // The findings' table is a table: its header on the slide, the figures beneath it.
    const table = slidePages.find((page) => /column sum mean min max amount 450\.00/.test(page));
    expect(table, slidePages.join("\n")).toBeDefined();
    // Each section's slides carry its text as notes: their notes pages say more than the slides.
    titles.forEach((title, i) => {
      if (i === 0 || title === "amount by region") return;
      expect(notesPages[i]!.length, `${title}: ${notesPages[i]}`).toBeGreaterThan(slidePages[i]!.length);
    });
  });

  it("an uploaded Excel 97–2003 workbook (.xls) is analysed over its sheets, as an .xlsx is", async () => {
    const runId = await runs.xls;
    const run = await main.waitFor(runId, undefined, 200_000);
    expect(run.status).toBe("succeeded");
    const result = (await events(runId)).find((e) => e.type === "tool.result" && e.data.tool === "run_code");
    // Both sheets as CSV files beside the workbook: the rows and the formula's total, the note of two lines as one cell.
    expect(result.data.output).toContain("### sales.Sales.csv: 6 rows, 3 columns (region, month, amount)");
    expect(result.data.output).toContain("### sales.Notes.csv: 2 rows, 2 columns (note, since)");
  });

  it("an uploaded PDF is summarized from its text", async () => {
    const runId = await runs.pdf;
    const run = await main.waitFor(runId, undefined, 200_000);
    expect(run.status).toBe("succeeded");
    expect(run.result).toContain("Summary of brief.pdf:");
    expect(run.result).toContain("Revenue rose 12 percent in Q3");
    expect(run.result).toContain("Costs fell in Q4");
  });

  it("a deep search over the run's files shows its stages and keeps its notes", async () => {
    const runId = await runs.search;
    const run = await main.waitFor(runId, undefined, 200_000);
    expect(run.status).toBe("succeeded");
    const stages = (await events(runId)).filter((e) => e.type === "search.progress").map((e) => e.data.stage);
    expect(stages).toEqual(["queries", "pages", "notes"]);
    const notes = run.files.find((f: any) => /^notes-.+\.md$/.test(f.name));
    const text = (await download(runId, notes!.name)).toString();
    expect(text).toContain("- Solar power capacity grew by 30 percent in 2026. [1]");
    expect(text).toContain("## Sources\n\n1. [energy.md](file:energy.md)");
  });
});
