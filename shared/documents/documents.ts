import { lazyImport } from "../lazyImport.js";
import { fileText, type StoredFile } from "../ports/files.js";
import { htmlToMarkdown, markdownTable } from "../web/readable.js";

/**
 * Files people send, made readable: spreadsheets (.xlsx, Excel 97–2003 .xls, CSV), Word documents
 * and PDFs become Markdown (what an agent reads) and workbooks become one CSV per sheet (what code
 * reads). The libraries are loaded on first use: a function that never meets such a file never
 * pays for them.
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

export type DocumentKind = "workbook" | "csv" | "docx" | "pdf";

/** The kind of document a file name says it is (undefined: read it as text). */
export function documentKind(name: string): DocumentKind | undefined {
  const extension = extensionOf(name);
  if (extension === "xlsx" || extension === "xlsm" || extension === "xls") return "workbook";
  if (extension === "csv") return "csv";
  if (extension === "docx") return "docx";
  if (extension === "pdf") return "pdf";
  return undefined;
}

const extensionOf = (name: string) => /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();

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
  if (converted.size > CONVERTED_KEPT) {
    const [oldest] = converted.keys(); // a Map keeps insertion order
    converted.delete(oldest);
  }
  return text;
}

/** One sheet as a grid of display texts (formulas as their last computed value), header row first. */
export interface Sheet {
  name: string;
  rows: string[][];
}

/** The file as Markdown: sheets as tables under their names (a CSV file's one table alone), a Word document's headings and lists, a PDF's text by page. */
export async function documentMarkdown(name: string, bytes: Uint8Array): Promise<string> {
  const kind = checked(name, bytes);
  const markdown =
    kind === "workbook"
      ? (await readSheets(name, bytes)).map((sheet) => `## Sheet: ${sheet.name}\n\n${markdownTable(sheet.rows)}`).join("\n\n")
      : kind === "csv"
        ? markdownTable(await csvRows(name, bytes))
        : kind === "docx"
          ? await docxMarkdown(name, bytes)
          : await pdfMarkdown(name, bytes);
  if (markdown.length > DOCUMENT_LIMITS.maxChars) {
    throw new DocumentError(
      `${name} makes more than ${DOCUMENT_LIMITS.maxChars} characters of text, the most one file may give; split it.`,
    );
  }
  return markdown.trim() ? markdown : `(${name} has no text.)`;
}

/** A workbook's sheets as CSV files (RFC 4180), named `<file name without extension>.<sheet>.csv`. */
export async function sheetCsvFiles(name: string, bytes: Uint8Array): Promise<{ name: string; csv: string }[]> {
  checked(name, bytes);
  const base = name.replace(/\.[^.]+$/, "");
  return (await readSheets(name, bytes)).map((sheet) => ({
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters in a sheet name become _ in the file name
    name: `${base}.${sheet.name.replace(/[/\\\u0000-\u001f]/g, "_")}.csv`,
    csv: sheetCsv(sheet),
  }));
}

/** The name says a document and the size is within the limit. */
function checked(name: string, bytes: Uint8Array): DocumentKind {
  const kind = documentKind(name);
  if (!kind) throw new DocumentError(`${name} is not a spreadsheet, Word document or PDF.`);
  if (bytes.byteLength > DOCUMENT_LIMITS.maxBytes) {
    throw new DocumentError(`${name} has ${bytes.byteLength} bytes; documents of at most ${DOCUMENT_LIMITS.maxBytes} bytes are read.`);
  }
  return kind;
}

/**
 * A workbook's sheets, by what its bytes are rather than its name (an .xlsx renamed .xls is read
 * all the same): a zip is Office Open XML (exceljs), an OLE compound file is Excel 97–2003 (SheetJS).
 */
export async function readSheets(name: string, bytes: Uint8Array): Promise<Sheet[]> {
  if (startsWith(bytes, ZIP)) return openXmlSheets(name, bytes);
  if (startsWith(bytes, COMPOUND_FILE)) return biffSheets(name, bytes);
  throw new DocumentError(
    `${name} is not a readable .${extensionOf(name)} workbook (it is neither an Excel workbook nor an Excel 97–2003 one).`,
  );
}

const ZIP = [0x50, 0x4b, 0x03, 0x04];
const COMPOUND_FILE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const startsWith = (bytes: Uint8Array, magic: number[]) => magic.every((byte, i) => bytes[i] === byte);

async function openXmlSheets(name: string, bytes: Uint8Array): Promise<Sheet[]> {
  const { default: ExcelJS } = await lazyImport(() => import("exceljs"), "exceljs");
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(Buffer.from(bytes) as unknown as ArrayBuffer);
  } catch (error) {
    throw new DocumentError(`${name} is not a readable .${extensionOf(name)} workbook (${reason(error)}).`);
  }
  const sheets = workbook.worksheets;
  checkSheetCount(name, sheets.length);
  return sheets.map((sheet) => {
    checkRowCount(name, sheet.name, sheet.rowCount);
    const width = sheet.columnCount;
    const rows: string[][] = [];
    sheet.eachRow({ includeEmpty: true }, (row) => {
      rows.push(Array.from({ length: width }, (_, i) => row.getCell(i + 1).text ?? ""));
    });
    return { name: sheet.name, rows: withoutTrailingEmptyRows(rows) };
  });
}

/** An Excel 97–2003 workbook (BIFF in an OLE compound file): each cell's text as Excel shows it. */
async function biffSheets(name: string, bytes: Uint8Array): Promise<Sheet[]> {
  const XLSX = await lazyImport(() => import("@e965/xlsx"), "@e965/xlsx");
  let workbook: ReturnType<typeof XLSX.read>;
  try {
    // Rows past the limit are not even parsed: the sheet's whole extent is still known (!fullref).
    workbook = XLSX.read(bytes, {
      type: "array",
      dense: true,
      cellFormula: false,
      cellHTML: false,
      cellStyles: false,
      sheetRows: DOCUMENT_LIMITS.maxRows + 1,
    });
  } catch (error) {
    throw new DocumentError(`${name} is not a readable .${extensionOf(name)} workbook (${reason(error)}).`);
  }
  checkSheetCount(name, workbook.SheetNames.length);
  return workbook.SheetNames.map((sheetName) => {
    const sheet = workbook.Sheets[sheetName];
    const extent = sheet["!fullref"] ?? sheet["!ref"];
    checkRowCount(name, sheetName, extent ? XLSX.utils.decode_range(extent).e.r + 1 : 0);
    // From A1, as exceljs gives them: a sheet whose data starts lower keeps its empty rows and columns.
    const range = extent ? { s: { r: 0, c: 0 }, e: XLSX.utils.decode_range(sheet["!ref"] ?? extent).e } : undefined;
    const rows = range ? XLSX.utils.sheet_to_json<string[]>(sheet, { header: 1, raw: false, defval: "", blankrows: true, range }) : [];
    return { name: sheetName, rows: withoutTrailingEmptyRows(rows.map((row) => row.map((cell) => String(cell ?? "")))) };
  });
}

function checkSheetCount(name: string, count: number): void {
  if (count > DOCUMENT_LIMITS.maxSheets)
    throw new DocumentError(`${name} has ${count} sheets; at most ${DOCUMENT_LIMITS.maxSheets} are read.`);
}

function checkRowCount(name: string, sheet: string, count: number): void {
  if (count > DOCUMENT_LIMITS.maxRows)
    throw new DocumentError(`Sheet "${sheet}" of ${name} has ${count} rows; at most ${DOCUMENT_LIMITS.maxRows} per sheet are read.`);
}

/** Trailing empty rows say nothing. */
function withoutTrailingEmptyRows(rows: string[][]): string[][] {
  while (rows.at(-1)?.every((cell) => cell === "")) rows.pop();
  return rows;
}

/**
 * A CSV file's rows (RFC 4180, UTF-8, a byte-order mark allowed). Lenient where the meaning
 * is plain (rows may be short, a stray quote inside a field is kept); a quote that never
 * closes, or bytes that are not text, are errors: the rest of the file could not be trusted.
 */
async function csvRows(name: string, bytes: Uint8Array): Promise<string[][]> {
  if (bytes.includes(0)) throw new DocumentError(`${name} is not a readable CSV file (it holds binary data, not text).`);
  const { parse } = await lazyImport(() => import("csv-parse"), "csv-parse");
  const rows = await new Promise<string[][]>((resolve, reject) =>
    parse(
      Buffer.from(bytes),
      { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, to: DOCUMENT_LIMITS.maxRows + 1 },
      (error, records: string[][] | undefined) =>
        error ? reject(new DocumentError(`${name} is not a readable CSV file (${reason(error)}).`)) : resolve(records ?? []),
    ),
  );
  if (rows.length > DOCUMENT_LIMITS.maxRows)
    throw new DocumentError(`${name} has more than ${DOCUMENT_LIMITS.maxRows} rows; at most ${DOCUMENT_LIMITS.maxRows} are read.`);
  return rows;
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
    return await htmlToMarkdown(value);
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
    if (pdf.numPages > DOCUMENT_LIMITS.maxPages)
      throw new DocumentError(`${name} has ${pdf.numPages} pages; at most ${DOCUMENT_LIMITS.maxPages} are read.`);
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
