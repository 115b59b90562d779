import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import JSZip from "jszip";
import { afterAll, describe, expect, it } from "vitest";
import { fileText } from "../../../../shared/ports/files.js";
import { outline, SLIDE_LIMITS } from "../../../../shared/reports/slides.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { writeReport } from "../../../../shared/tools/writeReport.js";
import { libreOffice, pdfPages } from "../../../support/libreoffice.js";

/**
 * Slides: write_report's pptx is a real PowerPoint file — title slide, a slide per section with
 * bullets that fit, each chart as an image on its own slide, speaker notes from the section's
 * text — checked in its XML and opened by LibreOffice, which prints it to a PDF of as many pages.
 */
const REPORT = [
  "Sales grew in every region.",
  "",
  "## Totals",
  "",
  "Read by run_code from sales_q1.csv, **checked** \\*twice\\*.",
  "",
  "| region | total_amount |",
  "|---|---|",
  "| north | 220 |",
  "| south | 180 |",
  ...Array.from({ length: 8 }, (_, i) => `| region_${i} | ${i} |`),
  "",
  "## Actions",
  "",
  ...Array.from({ length: 8 }, (_, i) => `- Action ${i + 1}: ${"follow up with the team ".repeat(i === 0 ? 10 : 1).trim()}`),
].join("\n");
const CHART = {
  title: "Sales by region",
  spec: { mark: "bar", encoding: { x: { field: "region", type: "nominal" }, y: { field: "total", type: "quantitative" } } },
  data: "totals.csv",
};

const work = mkdtempSync(path.join(tmpdir(), "stepwise-slides-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function deck() {
  const files = new MemoryFileStore();
  await files.put("run_s", "totals.csv", "region,total\nnorth,220\nsouth,180\n");
  const output = await writeReport.run(
    writeReport.parameters.parse({
      title: "Q1 sales",
      format: "pptx",
      content: REPORT,
      charts: [CHART],
      sources: [{ url: "https://example.com/q1", title: "Q1 ledger" }],
    }),
    testToolContext({ runId: "run_s", files }),
  );
  return { files, output, pptx: (await files.get("run_s", "q1-sales.pptx"))! };
}

/** The text runs of one slide's XML, in order. */
const texts = (xml: string) => [...xml.matchAll(/<a:t>([^<]*)<\/a:t>/g)].map((m) => m[1]!);

describe("slides", () => {
  it("outline: a title slide, a section's bullets split to fit, long bullets cut, the section's text as notes", () => {
    const slides = outline("Q1 sales", REPORT);
    expect(slides.map((s) => s.title)).toEqual(["Q1 sales", "Totals", "Totals (cont.)", "Totals (cont.)", "Actions", "Actions (cont.)"]);
    expect(slides[0]!.bullets).toEqual(["Sales grew in every region."]);
    // Underscores and escaped asterisks are text; emphasis marks are not.
    expect(slides[1]!.bullets).toEqual(["Read by run_code from sales_q1.csv, checked *twice*."]);
    // The table is a table, split to fit, its header on each of its slides.
    expect(slides[2]!.table).toEqual({
      header: ["region", "total_amount"],
      rows: [["north", "220"], ["south", "180"], ...Array.from({ length: 5 }, (_, i) => [`region_${i}`, String(i)])],
    });
    expect(slides[3]!.table).toEqual({ header: ["region", "total_amount"], rows: [5, 6, 7].map((i) => [`region_${i}`, String(i)]) });
    expect(slides[4]!.bullets).toHaveLength(SLIDE_LIMITS.bullets);
    expect(slides[5]!.bullets).toEqual(["Action 7: follow up with the team", "Action 8: follow up with the team"]);
    expect(slides.every((s) => s.bullets.every((b) => b.length <= SLIDE_LIMITS.bulletChars))).toBe(true);
    expect(slides[4]!.bullets[0]).toMatch(/…$/);
    // Every slide of a section has the section's text as its notes, plain.
    for (const slide of slides.slice(1, 4))
      expect(slide.notes).toBe(
        ["Read by run_code from sales_q1.csv, checked *twice*.", "region | total_amount", "north | 220", "south | 180"]
          .concat(Array.from({ length: 8 }, (_, i) => `region_${i} | ${i}`))
          .join("\n"),
      );
  });

  it("outline: arithmetic keeps its asterisks (2*3*4 is not emphasis), on the slide and in the notes, as in the console", () => {
    const [, totals] = outline("Sums", "## Totals\n\n- 2*3*4 = 24 and (120/8)*2 = 30, **checked** *twice*\n");
    expect(totals!.bullets).toEqual(["2*3*4 = 24 and (120/8)*2 = 30, checked twice"]);
    expect(totals!.notes).toBe("- 2*3*4 = 24 and (120/8)*2 = 30, checked twice");
  });

  it("write_report's pptx: slide XML with the titles, bullets, chart image and notes; an HTML rendering beside it", async () => {
    const { output, pptx, files } = await deck();
    expect(output).toMatch(
      /^Saved the report q1-sales\.pptx \(\d+ bytes, application\/vnd\.openxmlformats-officedocument\.presentationml\.presentation\)\.$/,
    );
    const zip = await JSZip.loadAsync(pptx.body);
    const slideFiles = Object.keys(zip.files)
      .filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name))
      .sort((a, b) => Number(/\d+/.exec(a)) - Number(/\d+/.exec(b)));
    const slides = await Promise.all(slideFiles.map((name) => zip.file(name)!.async("string")));
    expect(slides.map((xml) => texts(xml)[0])).toEqual([
      "Q1 sales",
      "Totals",
      "Totals (cont.)",
      "Totals (cont.)",
      "Actions",
      "Actions (cont.)",
      "Sources",
      "Sales by region",
    ]);
    expect(slides[2]).toContain("<a:tbl>");
    expect(texts(slides[3]!)).toEqual(["Totals (cont.)", "region", "total_amount", "region_5", "5", "region_6", "6", "region_7", "7"]);
    expect(texts(slides[6]!)).toEqual(["Sources", "Q1 ledger: https://example.com/q1"]);
    // The chart's slide shows a PNG from the package's media.
    const rels = await zip.file("ppt/slides/_rels/slide8.xml.rels")!.async("string");
    const media = /Target="\.\.\/media\/([^"]+\.png)"/.exec(rels)?.[1];
    expect(slides[7]).toContain("<p:pic>");
    expect(media).toBeDefined();
    const png = await zip.file(`ppt/media/${media}`)!.async("nodebuffer");
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    // Speaker notes carry the section's text.
    const notes = await Promise.all(
      Object.keys(zip.files)
        .filter((n) => /^ppt\/notesSlides\/notesSlide\d+\.xml$/.test(n))
        .map((n) => zip.file(n)!.async("string")),
    );
    expect(notes.some((xml) => texts(xml).join(" ").includes("north | 220"))).toBe(true);
    const preview = fileText((await files.get("run_s", "q1-sales.slides.html"))!);
    expect(preview.match(/<section class="slide/g)).toHaveLength(8);
    expect(preview.match(/<th>region<\/th><th>total_amount<\/th>/g)).toHaveLength(2);
    expect(preview).toContain('<img alt="Sales by region" src="data:image/png;base64,');
  });

  it("opens in LibreOffice, which prints it as a PDF of one page per slide, then each slide's notes", async ({ skip }) => {
    const office = libreOffice();
    if ("missing" in office) {
      console.log(`Skipped: ${office.missing}`);
      return skip(office.missing);
    }
    const { pptx } = await deck();
    const input = path.join(work, "q1-sales.pptx");
    writeFileSync(input, pptx.body);
    const pages = await pdfPages(office.soffice, input);
    expect(pages).toHaveLength(16); // 8 slides, then 8 notes pages
    expect(pages[1]).toBe("Totals • Read by run_code from sales_q1.csv, checked *twice*.");
    expect(pages[2]).toMatch(/^Totals \(cont\.\) region total_amount north 220 south 180 region_0 0 /);
    expect(pages[3]).toBe("Totals (cont.) region total_amount region_5 5 region_6 6 region_7 7");
    // Each notes page: the slide, then what the presenter reads.
    expect(pages[8 + 3]).toMatch(/^Totals \(cont\.\) region total_amount region_5 5 /);
    expect(pages[8 + 3]).toContain("Read by run_code from sales_q1");
    expect(pages[8 + 3]).toContain("region | total_amount north | 220 south | 180 region_0 | 0");
  }, 240_000);
});
