import * as XLSX from "@e965/xlsx";
import { afterAll, describe, expect, it } from "vitest";
import type { ToolProgress } from "../../../../shared/contracts/events.js";
import { DOCUMENT_LIMITS, documentMarkdown, sheetCsvFiles } from "../../../../shared/documents/documents.js";
import { runPython, stopSpare } from "../../../../shared/sandbox/runPython.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { readArtifact } from "../../../../shared/tools/artifacts.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { runCodeTool } from "../../../../shared/tools/runCode.js";
import { legacyWorkbook, pdfDocument, salesWorkbook, wordDocument, writtenMemo } from "../../../support/documents.js";

/**
 * Files people send (spreadsheets: .xlsx, Excel 97–2003 .xls and CSV; Word documents; PDFs):
 * read_artifact reads them as Markdown, in pages; run_code finds each sheet as a CSV beside its
 * workbook (in the real Python sandbox); a corrupt file or one past a limit is a tool error that
 * says what is wrong.
 */
const files = new MemoryFileStore();
const context = testToolContext({ runId: "run_docs", files });
const tools = new ToolRegistry([readArtifact]);
const read = (args: Record<string, unknown>) =>
  tools.execute({ id: "c1", name: "read_artifact", arguments: JSON.stringify(args) }, context);

afterAll(() => stopSpare());

/** The "Sales" sheet of both test workbooks (.xlsx and .xls), as Markdown: the total is the formula's value. */
const SALES_SHEET = [
  "## Sheet: Sales",
  "",
  "| region | month | amount |",
  "| --- | --- | --- |",
  "| north | jan | 120.5 |",
  "| south | jan | 80 |",
  "| north | feb | 99.5 |",
  "| south | feb | 100 |",
  "| east | feb | 50 |",
  "| total |  | 450 |",
  "",
];

describe("documents as Markdown", () => {
  it("a workbook: each sheet a table under its name, formulas as their values, pipes escaped", async () => {
    const markdown = await documentMarkdown("sales.xlsx", await salesWorkbook({ total: true }));
    expect(markdown).toBe(
      [...SALES_SHEET, "## Sheet: Notes", "", "| note |", "| --- |", "| Figures in EUR, a \\| pipe and a, comma |"].join("\n"),
    );
  });

  it("an Excel 97–2003 workbook (.xls, written by LibreOffice): each sheet a table under its name, as Excel shows its cells", async () => {
    const markdown = await documentMarkdown("sales.xls", legacyWorkbook());
    expect(markdown).toBe(
      [
        ...SALES_SHEET,
        "## Sheet: Notes",
        "",
        "| note | since |",
        "| --- | --- |",
        "| Figures in EUR, a \\| pipe and a, comma | 1/31/2026 |",
        "| Two lines:<br>first, then second |  |",
      ].join("\n"),
    );
  });

  it("a workbook is read by what its bytes are: an .xlsx renamed .xls reads the same", async () => {
    const workbook = await salesWorkbook({ total: true });
    expect(await documentMarkdown("renamed.xls", workbook)).toBe(await documentMarkdown("sales.xlsx", workbook));
  });

  it("a CSV file: one table; quoted commas, quotes and line breaks kept; a byte-order mark dropped; short rows padded", async () => {
    const csv =
      '\ufeffregion,note,amount\r\nnorth,"cold, wet",120.5\r\nsouth,"said ""hi""\nthen left",80\r\n\r\neast,5" screen\r\nwest\r\n';
    expect(await documentMarkdown("sales.csv", Buffer.from(csv))).toBe(
      [
        "| region | note | amount |",
        "| --- | --- | --- |",
        "| north | cold, wet | 120.5 |",
        '| south | said "hi"<br>then left | 80 |',
        '| east | 5" screen |  |',
        "| west |  |  |",
      ].join("\n"),
    );
  });

  it("a Word document: its heading, paragraphs and text", async () => {
    const markdown = await documentMarkdown(
      "memo.docx",
      await wordDocument("Quarterly memo", ["Sales grew in the north.", "- Hire two people"]),
    );
    expect(markdown).toContain("# Quarterly memo");
    expect(markdown).toContain("Sales grew in the north.");
    expect(markdown).toContain("Hire two people");
  });

  it("a PDF: its text page by page", async () => {
    const markdown = await documentMarkdown("brief.pdf", pdfDocument(["Revenue rose (12%) in Q3", "Costs fell in Q4"]));
    expect(markdown).toBe("## Page 1\n\nRevenue rose (12%) in Q3\n\n## Page 2\n\nCosts fell in Q4");
  });

  it("a Word document written by a word processor (LibreOffice): its headings, text, list and table, accents and dashes intact", async () => {
    const markdown = await documentMarkdown("memo.docx", writtenMemo("docx"));
    expect(markdown).toMatch(
      /^# Quarterly memo\n\nSales grew in the north by 12 % — ahead of plan, said Zoë\.\n\n## Next steps\n\n-\s+Hire two people\n-\s+Open the Lyon office\n\n/,
    );
    // The table keeps its rows and columns: which amount is whose.
    expect(markdown).toContain(
      "\n\n| region | amount |\n| --- | --- |\n| north | 220 |\n| south | 180 |\n\n## Appendix\n\nCosts fell in Q4.",
    );
  });

  it("a PDF written by an office suite (LibreOffice: embedded fonts, compressed streams): its text under each page's heading", async () => {
    const markdown = await documentMarkdown("memo.pdf", writtenMemo("pdf"));
    const [first, second] = markdown.split("\n\n## Page 2\n\n");
    expect(first).toMatch(
      /^## Page 1\n\nQuarterly memo\nSales grew in the north by 12 % — ahead of plan, said Zoë\.\nNext steps\n• Hire two people\n• Open the Lyon office\n/,
    );
    expect(first).toContain("north 220");
    expect(second).toBe("Appendix\nCosts fell in Q4.");
  });

  it("a workbook's sheets as CSV files named after the workbook and the sheet", async () => {
    const sheets = await sheetCsvFiles("sales.xlsx", await salesWorkbook());
    expect(sheets.map((s) => s.name)).toEqual(["sales.Sales.csv", "sales.Notes.csv"]);
    expect(sheets[0]!.csv).toBe(
      "region,month,amount\r\nnorth,jan,120.5\r\nsouth,jan,80\r\nnorth,feb,99.5\r\nsouth,feb,100\r\neast,feb,50\r\n",
    );
    expect(sheets[1]!.csv).toBe('note\r\n"Figures in EUR, a | pipe and a, comma"\r\n');
  });

  it("an .xls workbook's sheets as CSV files too", async () => {
    const sheets = await sheetCsvFiles("sales.xls", legacyWorkbook());
    expect(sheets.map((s) => s.name)).toEqual(["sales.Sales.csv", "sales.Notes.csv"]);
    expect(sheets[0]!.csv).toBe(
      "region,month,amount\r\nnorth,jan,120.5\r\nsouth,jan,80\r\nnorth,feb,99.5\r\nsouth,feb,100\r\neast,feb,50\r\ntotal,,450\r\n",
    );
    expect(sheets[1]!.csv).toBe('note,since\r\n"Figures in EUR, a | pipe and a, comma",1/31/2026\r\n"Two lines:\nfirst, then second",\r\n');
  });
});

describe("read_artifact over documents", () => {
  const longRows = [["id", "text"], ...Array.from({ length: 600 }, (_, i) => [i + 1, `row number ${i + 1}, of the sheet`])];
  it.each([
    ["long.xlsx", async () => salesWorkbook({ rows: longRows })],
    [
      "long.xls",
      async () =>
        Buffer.from(XLSX.write(XLSX.utils.book_new(XLSX.utils.aoa_to_sheet(longRows), "Sales"), { type: "buffer", bookType: "xls" })),
    ],
    ["long.csv", async () => Buffer.from(longRows.map(([id, text]) => `${id},"${text}"`).join("\n"))],
  ])("reads a long %s in pages, each from where the last stopped, to the end", async (name, make) => {
    const body = await make();
    await files.put("run_docs", name, body);
    let offset = 0;
    let whole = "";
    let pages = 0;
    for (; pages < 10; pages++) {
      const { ok, output } = await read({ filename: name, offset });
      expect(ok).toBe(true);
      const [, text, , , next] =
        /^([\s\S]*)\n\[characters (\d+)–(\d+) of \d+\.(?: Read on with read_artifact \{"filename": "long\.\w+", "offset": (\d+)\}\.| That is the end of the file\.)\]$/.exec(
          output,
        )!;
      whole += text;
      if (!next) break;
      offset = Number(next);
    }
    expect(pages).toBeGreaterThan(0);
    expect(whole).toBe(await documentMarkdown(name, body));
    expect(whole).toContain("| 600 | row number 600, of the sheet |");
  });

  it.each([
    ["broken.xlsx", Buffer.from("PK\u0003\u0004 not really a zip"), /broken\.xlsx is not a readable \.xlsx workbook/],
    ["broken.docx", Buffer.from("hello"), /broken\.docx is not a readable \.docx document/],
    ["broken.pdf", Buffer.from("%PDF-1.4 nothing else"), /broken\.pdf is not a readable PDF/],
    [
      "broken.xls",
      Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 1, 2, 3]),
      /broken\.xls is not a readable \.xls workbook \(.+\)\.$/,
    ],
    ["cut.xls", legacyWorkbook().subarray(0, 3000), /cut\.xls is not a readable \.xls workbook \(.+\)\.$/],
    [
      "text.xls",
      Buffer.from("region,amount\nnorth,1\n"),
      /text\.xls is not a readable \.xls workbook \(it is neither an Excel workbook nor an Excel 97–2003 one\)\.$/,
    ],
    [
      "unclosed.csv",
      Buffer.from('region,amount\nnorth,"120\nsouth,80\n'),
      /unclosed\.csv is not a readable CSV file \(Quote Not Closed: .*line \d+\)\.$/,
    ],
    [
      "binary.csv",
      Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x2c]),
      /binary\.csv is not a readable CSV file \(it holds binary data, not text\)\.$/,
    ],
  ])("%s: a tool error that says what is wrong", async (name, body, message) => {
    await files.put("run_docs", name, body);
    const outcome = await read({ filename: name });
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/^Error: read_artifact failed: /);
    expect(outcome.output).toMatch(message);
  });

  it("a file past the size limit is refused with the limit", async () => {
    await files.put("run_docs", "huge.pdf", new Uint8Array(DOCUMENT_LIMITS.maxBytes + 1));
    const outcome = await read({ filename: "huge.pdf" });
    expect(outcome).toMatchObject({ ok: false });
    expect(outcome.output).toContain(`documents of at most ${DOCUMENT_LIMITS.maxBytes} bytes are read`);
  });

  it("a sheet past the row limit is refused with the limit", async () => {
    const rows = Array.from({ length: DOCUMENT_LIMITS.maxRows + 1 }, (_, i) => [i]);
    await files.put("run_docs", "tall.xlsx", await salesWorkbook({ rows }));
    const outcome = await read({ filename: "tall.xlsx" });
    expect(outcome).toMatchObject({ ok: false });
    expect(outcome.output).toContain(
      `Sheet "Sales" of tall.xlsx has ${DOCUMENT_LIMITS.maxRows + 1} rows; at most ${DOCUMENT_LIMITS.maxRows} per sheet are read.`,
    );
  }, 60_000);

  it("a CSV file past the row limit is refused with the limit", async () => {
    await files.put("run_docs", "tall.csv", "n\n".repeat(DOCUMENT_LIMITS.maxRows + 1));
    const outcome = await read({ filename: "tall.csv" });
    expect(outcome).toMatchObject({ ok: false });
    expect(outcome.output).toContain(
      `tall.csv has more than ${DOCUMENT_LIMITS.maxRows} rows; at most ${DOCUMENT_LIMITS.maxRows} are read.`,
    );
  });

  it("an .xls workbook past the sheet limit is refused with the limit", async () => {
    const book = XLSX.utils.book_new();
    for (let i = 1; i <= DOCUMENT_LIMITS.maxSheets + 1; i++) XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([[i]]), `S${i}`);
    await files.put("run_docs", "wide.xls", Buffer.from(XLSX.write(book, { type: "buffer", bookType: "xls" })));
    const outcome = await read({ filename: "wide.xls" });
    expect(outcome).toMatchObject({ ok: false });
    expect(outcome.output).toContain(
      `wide.xls has ${DOCUMENT_LIMITS.maxSheets + 1} sheets; at most ${DOCUMENT_LIMITS.maxSheets} are read.`,
    );
  });
});

describe("run_code over a workbook", { timeout: 120_000 }, () => {
  const sandbox = {
    keepsState: false,
    grant: "sandbox:invoke" as const,
    run: (request: Parameters<typeof runPython>[0]) => runPython(request),
  };
  const tool = runCodeTool(sandbox, { timeoutMs: 30_000, memoryMb: 256, maxOutputChars: 5_000 });

  it("finds each sheet as a CSV beside the workbook, and shows the code, then its output, as it runs", async () => {
    const store = new MemoryFileStore();
    await store.put("run_code", "sales.xlsx", await salesWorkbook());
    const progress: ToolProgress[] = [];
    const code =
      "import csv, os\nprint(sorted(os.listdir('files')))\nrows = list(csv.DictReader(open('files/sales.Sales.csv')))\nprint(sum(float(r['amount']) for r in rows))";
    const output = await tool.run(
      { code },
      testToolContext({ runId: "run_code", files: store, progress: (event) => progress.push(event) }),
    );
    expect(output).toBe("stdout:\n['sales.Notes.csv', 'sales.Sales.csv', 'sales.xlsx']\n450.0");
    expect(progress).toEqual([
      { type: "code", data: { part: "source", language: "python", text: code } },
      { type: "code", data: { part: "output", language: "python", text: output, ok: true } },
    ]);
  });

  it("finds each sheet of an Excel 97–2003 workbook (.xls) as a CSV beside it", async () => {
    const store = new MemoryFileStore();
    await store.put("run_code", "sales.xls", legacyWorkbook());
    const code =
      "import csv, os\nprint(sorted(os.listdir('files')))\nrows = list(csv.DictReader(open('files/sales.Sales.csv')))\nprint(sum(float(r['amount']) for r in rows if r['region'] != 'total'))\nprint(list(csv.reader(open('files/sales.Notes.csv', newline='')))[2][0])";
    const output = await tool.run({ code }, testToolContext({ runId: "run_code", files: store }));
    expect(output).toBe("stdout:\n['sales.Notes.csv', 'sales.Sales.csv', 'sales.xls']\n450.0\nTwo lines:\nfirst, then second");
  });

  it("a corrupt workbook is mounted as it is, and the model is told why it has no CSVs", async () => {
    const store = new MemoryFileStore();
    await store.put("run_code", "broken.xlsx", Buffer.from("not a workbook"));
    const output = await tool.run(
      { code: "import os\nprint(sorted(os.listdir('files')))" },
      testToolContext({ runId: "run_code", files: store }),
    );
    expect(output).toMatch(
      /^note: no CSV of its sheets: broken\.xlsx is not a readable \.xlsx workbook \(.+\)\.\n\nstdout:\n\['broken\.xlsx'\]$/,
    );
  });
});
