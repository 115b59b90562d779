import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { getDocumentProxy } from "unpdf";
import { aptInstall } from "./apt.js";

const found = () => ["soffice", "libreoffice"].find((name) => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0);

/**
 * Global set-up of the "office" test project: Debian's libreoffice-impress is installed where it is
 * missing and this user may (root, or sudo without a password), once, before any test starts. On a
 * cold machine the download takes minutes: no test's time limit is spent on it.
 */
export default function setup() {
  if (!found()) aptInstall(["libreoffice-impress"], "to open the decks the tests write");
}

/** LibreOffice for the tests that open a deck as another program would, or the reason they cannot, which they print as they skip. */
export function libreOffice(): { soffice: string } | { missing: string } {
  const soffice = found();
  return soffice
    ? { soffice }
    : {
        missing:
          "LibreOffice is not installed and cannot be here (no apt-get as root or password-less sudo): sudo apt-get install -y --no-install-recommends libreoffice-impress",
      };
}

/** The deck as LibreOffice prints it with its notes pages: each page's text, spaces made single. */
export async function pdfPages(soffice: string, input: string): Promise<string[]> {
  // A profile of its own: no clash with another LibreOffice, nothing left in the home folder.
  const converted = spawnSync(
    soffice,
    [
      `-env:UserInstallation=file://${path.join(path.dirname(input), "profile")}`,
      "--headless",
      "--convert-to",
      'pdf:impress_pdf_Export:{"ExportNotesPages":{"type":"boolean","value":"true"}}',
      "--outdir",
      path.dirname(input),
      input,
    ],
    { encoding: "utf8", timeout: 180_000 },
  );
  if (converted.status !== 0) throw new Error(`LibreOffice could not print ${input}: ${converted.stderr}`);
  const pdf = await getDocumentProxy(new Uint8Array(readFileSync(input.replace(/\.pptx$/, ".pdf"))));
  const pages: string[] = [];
  for (let i = 1; i <= pdf.numPages; i++) {
    const content = await (await pdf.getPage(i)).getTextContent();
    pages.push(
      content.items
        .map((item) => ("str" in item ? item.str : ""))
        .join(" ")
        .replace(/\s+/g, " ")
        .trim(),
    );
  }
  return pages;
}
