import { fileText, type StoredFile } from "../ports/files.js";
import { htmlToMarkdown } from "../web/readable.js";
import { lazyImport } from "../lazyImport.js";

/**
 * Files people send, made readable: spreadsheets, Word documents and PDFs become Markdown (what an
 * agent reads) and spreadsheets become one CSV per sheet (what code reads). The libraries are
 * loaded on first use: a function that never meets such a file never pays for them.
 */

/** What is read of one file; past these a read stops with an error that says which limit. */
export const DOCUMENT_LIMITS = {
  /** The file itself. */
  maxBytes: 20 * 1024 * 1024,
  /** Sheets of one workbook. */
  maxSheets: 50,
  /** Rows of one sheet. */
  maxRows: 100_000,
  /** Pages of one PDF. */
  maxPages: 500,
  /** The Markdown made of one file (it is read in pages of read_artifact's size). */
  maxChars: 5_000_000,
} as const;

/** A file that is not what its name says, or past a limit: the message is for the model and the user. */
export class DocumentError extends Error {}

export type DocumentKind = "workbook" | "legacy-workbook" | "docx" | "pdf";

/** The kind of document a file name says it is (undefined: read it as text). */
export function documentKind(name: string): DocumentKind | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  if (extension === "xlsx" || extension === "xlsm") return "workbook";
  if (extension === "xls") return "legacy-workbook";
  if (extension === "docx") return "docx";
  if (extension === "pdf") return "pdf";
  return undefined;
}

/** The last few documents made readable, by file version: reading a long one page by page converts it once. */
const converted = new Map<string, string>();
const CONVERTED_KEPT = 4;

/** A file's text: a document (spreadsheet, Word, PDF) as Markdown, anything else as UTF-8. */
export async function readableText(runId: string, file: StoredFile): Promise<string> {
  if (!documentKind(file.name)) return fileText(file);
  const key = `${runId}\u0000${file.name}\u0000${file.createdAt}\u0000${file.bytes}`;
  const known = converted.get(key);
  if (known !== undefined) return known;
  const text = await documentMarkdown(file.name, file.body);
  converted.set(key, text);
  if (converted.size > CONVERTED_KEPT) converted.delete(converted.keys().next().value!);
  return text;
}

/** One sheet as a grid of display texts (formulas as their last computed value), header row first. */
export interface Sheet {
  name: string;
  rows: string[][];
}

/** The file as Markdown: sheets as tables under their names, a Word document's headings and lists, a PDF's text by page. */
export async function documentMarkdown(name: string, bytes: Uint8Array): Promise<string> {
  const kind = checked(name, bytes);
  const markdown =
    kind === "workbook"
      ? (await readSheets(name, bytes)).map(sheetMarkdown).join("\n\n")
      : kind === "docx"
        ? await docxMarkdown(name, bytes)
        : await pdfMarkdown(name, bytes);
  if (markdown.length > DOCUMENT_LIMITS.maxChars) {
    throw new DocumentError(`${name} makes more than ${DOCUMENT_LIMITS.maxChars} characters of text, the most one file may give; split it.`);
  }
  return markdown.trim() ? markdown : `(${name} has no text.)`;
}

/** A workbook's sheets as CSV files (RFC 4180), named `<file name without extension>.<sheet>.csv`. */
export async function sheetCsvFiles(name: string, bytes: Uint8Array): Promise<{ name: string; csv: string }[]> {
  checked(name, bytes);
  const base = name.replace(/\.[^.]+$/, "");
  return (await readSheets(name, bytes)).map((sheet) => ({ name: `${base}.${sheet.name.replace(/[/\\\u0000-\u001f]/g, "_")}.csv`, csv: sheetCsv(sheet) }));
}

/** The name says a document, the size is within the limit, and a legacy .xls is refused with what to do. */
function checked(name: string, bytes: Uint8Array): Exclude<DocumentKind, "legacy-workbook"> {
  const kind = documentKind(name);
  if (!kind) throw new DocumentError(`${name} is not a spreadsheet, Word document or PDF.`);
  if (kind === "legacy-workbook") {
    throw new DocumentError(`${name} is an Excel 97–2003 workbook (.xls), which cannot be read here; save it as .xlsx or .csv and upload it again.`);
  }
  if (bytes.byteLength > DOCUMENT_LIMITS.maxBytes) {
    throw new DocumentError(`${name} has ${bytes.byteLength} bytes; documents of at most ${DOCUMENT_LIMITS.maxBytes} bytes are read.`);
  }
  return kind;
}

export async function readSheets(name: string, bytes: Uint8Array): Promise<Sheet[]> {
  const { default: ExcelJS } = await lazyImport(() => import("exceljs"), "exceljs");
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(Buffer.from(bytes) as unknown as ArrayBuffer);
  } catch (error) {
    throw new DocumentError(`${name} is not a readable .xlsx workbook (${reason(error)}).`);
  }
  const sheets = workbook.worksheets;
  if (sheets.length > DOCUMENT_LIMITS.maxSheets) throw new DocumentError(`${name} has ${sheets.length} sheets; at most ${DOCUMENT_LIMITS.maxSheets} are read.`);
  return sheets.map((sheet) => {
    if (sheet.rowCount > DOCUMENT_LIMITS.maxRows) {
      throw new DocumentError(`Sheet "${sheet.name}" of ${name} has ${sheet.rowCount} rows; at most ${DOCUMENT_LIMITS.maxRows} per sheet are read.`);
    }
    const width = sheet.columnCount;
    const rows: string[][] = [];
    sheet.eachRow({ includeEmpty: true }, (row) => {
      rows.push(Array.from({ length: width }, (_, i) => row.getCell(i + 1).text ?? ""));
    });
    // Trailing empty rows say nothing.
    while (rows.length && rows.at(-1)!.every((cell) => cell === "")) rows.pop();
    return { name: sheet.name, rows };
  });
}

function sheetMarkdown(sheet: Sheet): string {
  const title = `## Sheet: ${sheet.name}`;
  if (!sheet.rows.length) return `${title}\n\n(empty)`;
  const cell = (text: string) => text.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, "<br>");
  const line = (row: string[]) => `| ${row.map(cell).join(" | ")} |`;
  const [header, ...body] = sheet.rows;
  return [title, "", line(header!), `|${header!.map(() => " --- ").join("|")}|`, ...body.map(line)].join("\n");
}

/** A sheet as CSV (RFC 4180: fields with commas, quotes or line breaks quoted). */
export function sheetCsv(sheet: Sheet): string {
  const field = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
  return sheet.rows.map((row) => row.map(field).join(",")).join("\r\n") + (sheet.rows.length ? "\r\n" : "");
}

async function docxMarkdown(name: string, bytes: Uint8Array): Promise<string> {
  const { default: mammoth } = await lazyImport(() => import("mammoth"), "mammoth");
  try {
    const { value } = await mammoth.convertToHtml({ buffer: Buffer.from(bytes) });
    return htmlToMarkdown(value);
  } catch (error) {
    throw new DocumentError(`${name} is not a readable .docx document (${reason(error)}).`);
  }
}

async function pdfMarkdown(name: string, bytes: Uint8Array): Promise<string> {
  const { extractText, getDocumentProxy } = await lazyImport(() => import("unpdf"), "unpdf");
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // A copy: pdf.js takes over (detaches) the buffer it is given.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  } catch (error) {
    throw new DocumentError(`${name} is not a readable PDF (${reason(error)}).`);
  }
  try {
    if (pdf.numPages > DOCUMENT_LIMITS.maxPages) throw new DocumentError(`${name} has ${pdf.numPages} pages; at most ${DOCUMENT_LIMITS.maxPages} are read.`);
    const { text } = await extractText(pdf, { mergePages: false });
    return text.map((page, i) => `## Page ${i + 1}\n\n${page.trim()}`).join("\n\n");
  } catch (error) {
    if (error instanceof DocumentError) throw error;
    throw new DocumentError(`${name} is not a readable PDF (${reason(error)}).`);
  } finally {
    await pdf.loadingTask.destroy();
  }
}

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 200);
