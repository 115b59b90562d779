/** Files on the command line: `--file` uploads for a run, `stepwise files`, download links in `get`. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { StepwiseClient } from "../../shared/apiClient/client.js";
import type { FileList, RunView } from "../../shared/contracts/responses.js";
import { UsageError } from "./args.js";
import type { Io } from "./follow.js";

/** Uploads each path (named by its base name) → the file ids for the run. */
export async function uploadAll(client: StepwiseClient, paths: string[], io: Io): Promise<string[]> {
  const ids: string[] = [];
  for (const file of paths) {
    let body: Buffer<ArrayBuffer>;
    try {
      body = await readFile(file);
    } catch (error) {
      throw new UsageError(
        `--file ${file}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`,
      );
    }
    const uploaded = await client.uploadFile(path.basename(file), body);
    io.stderr.write(`Uploaded ${uploaded.name} (${uploaded.bytes} bytes) as ${uploaded.fileId}.\n`);
    ids.push(uploaded.fileId);
  }
  return ids;
}

/** One line per file: name, type, size and its download link (a redirect to a short-lived URL). */
export function printFiles(listing: FileList): string {
  if (listing.files.length === 0) return `Run ${listing.runId} has no files.\n`;
  return listing.files.map((f) => `${f.name}\t${f.contentType}\t${f.bytes} bytes\t${f.download}\n`).join("");
}

/** The run as `get` prints it: each file with the link that downloads it. */
export function withDownloadLinks(run: RunView, apiUrl: string) {
  return {
    ...run,
    files: run.files.map((f) => ({ ...f, download: `${apiUrl}/v1/runs/${run.runId}/files/${encodeURIComponent(f.name)}` })),
  };
}
