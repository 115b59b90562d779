import { readFileSync } from "node:fs";
import ExcelJS from "exceljs";
import JSZip from "jszip";

/**
 * Documents as people send them, made in the test: an .xlsx written by ExcelJS (two sheets, a
 * formula), a .docx of the parts Word writes (a heading, a paragraph, a list), and a PDF with one
 * text line per page (objects and cross-reference table as the PDF 1.4 specification lays out).
 */

export const SALES_ROWS = [
  ["region", "month", "amount"],
  ["north", "jan", 120.5],
  ["south", "jan", 80],
  ["north", "feb", 99.5],
  ["south", "feb", 100],
  ["east", "feb", 50],
] as const;

/** A workbook with a "Sales" sheet (a total by formula below the rows) and a "Notes" sheet. */
export async function salesWorkbook(options: { rows?: readonly (readonly (string | number)[])[]; total?: boolean } = {}): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const sales = workbook.addWorksheet("Sales");
  const rows = options.rows ?? SALES_ROWS;
  for (const row of rows) sales.addRow([...row]);
  if (options.total) sales.addRow(["total", "", { formula: `SUM(C2:C${rows.length})`, result: 450 }]);
  const notes = workbook.addWorksheet("Notes");
  notes.addRow(["note"]);
  notes.addRow(["Figures in EUR, a | pipe and a, comma"]);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

/**
 * An Excel 97–2003 workbook (BIFF8) as LibreOffice writes it, committed: the sales rows with a
 * total by formula on "Sales"; on "Notes" a note with a pipe and commas, a date (31 Jan 2026) and a
 * text of two lines. Made by writing that workbook with ExcelJS as sales.xlsx, then
 * `soffice --headless --convert-to xls sales.xlsx` (LibreOffice 7.4, Debian's libreoffice-calc).
 */
export const legacyWorkbook = (): Buffer => readFileSync(new URL("../fixtures/sales.xls", import.meta.url));

/**
 * A memo as a word processor writes it, committed: memo.docx (Word 2007 XML) and memo.pdf (two
 * pages, fonts embedded, streams compressed), both by LibreOffice Writer 7.4 from one HTML page
 * (a heading, a paragraph with "12 % — … Zoë", a "Next steps" list, a table, and an "Appendix"
 * on a page of its own): `soffice --headless --infilter="HTML (StarWriter)" --convert-to
 * 'docx:MS Word 2007 XML' memo.html`, and `--convert-to pdf:writer_pdf_Export` for the PDF.
 */
export const writtenMemo = (extension: "docx" | "pdf"): Buffer => readFileSync(new URL(`../fixtures/memo.${extension}`, import.meta.url));

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
const ROOT_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

/** A Word document: a Heading 1, then each paragraph (a "- " paragraph is a list item). */
export async function wordDocument(heading: string, paragraphs: string[]): Promise<Buffer> {
  const xmlText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const paragraph = (text: string, style?: string) =>
    `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ""}<w:r><w:t xml:space="preserve">${xmlText(text)}</w:t></w:r></w:p>`;
  const body = [
    paragraph(heading, "Heading1"),
    ...paragraphs.map((p) => (p.startsWith("- ") ? paragraph(p.slice(2), "ListBullet") : paragraph(p))),
  ].join("");
  const zip = new JSZip();
  zip.file("[Content_Types].xml", CONTENT_TYPES);
  zip.file("_rels/.rels", ROOT_RELS);
  zip.file(
    "word/document.xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
  );
  return zip.generateAsync({ type: "nodebuffer" });
}

/** A PDF with one page per text (Helvetica, ASCII text). */
export function pdfDocument(pages: string[]): Buffer {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${pages.map((_, i) => `${4 + i * 2} 0 R`).join(" ")}] /Count ${pages.length} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  pages.forEach((text, i) => {
    const stream = `BT /F1 18 Tf 72 720 Td (${text.replace(/[()\\]/g, "\\$&")}) Tj ET`;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`,
    );
    objects.push(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`);
  });
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
