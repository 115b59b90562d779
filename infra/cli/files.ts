/** Files on the command line: `--file` uploads for a run, `stepwise files`, download links in `get`. */
import { readFile, writeFile } from "node:fs/promises";
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

/**
 * One line per file: name, type, size and a short-lived link to its bytes, which opens without the
 * key (the API's own download route answers 401 without the Authorization header).
 */
export async function printFiles(client: StepwiseClient, listing: FileList): Promise<string> {
  if (listing.files.length === 0) return `Run ${listing.runId} has no files.\n`;
  const lines = await Promise.all(
    listing.files.map(async (f) => `${f.name}\t${f.contentType}\t${f.bytes} bytes\t${await client.fileLink(listing.runId, f.name)}\n`),
  );
  return `${lines.join("")}(The links work for a few minutes; 'stepwise files ${listing.runId} --download' saves the files.)\n`;
}

/** Saves the run's files (or the one named) in `folder` under their names; never over a file that is there. */
export async function downloadFiles(client: StepwiseClient, runId: string, only: string | undefined, folder: string, io: Io) {
  const { files } = await client.listFiles(runId);
  const chosen = only === undefined ? files : files.filter((f) => f.name === only);
  if (only !== undefined && chosen.length === 0)
    throw new UsageError(`Run ${runId} has no file named ${only}. Its files: ${files.map((f) => f.name).join(", ") || "none"}.`);
  for (const file of chosen) {
    const response = await fetch(await client.fileLink(runId, file.name));
    if (!response.ok) throw new Error(`Could not download ${file.name}: the storage answered ${response.status}.`);
    const target = path.join(folder, path.basename(file.name));
    try {
      await writeFile(target, Buffer.from(await response.arrayBuffer()), { flag: "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST")
        throw new UsageError(`${target} exists already: move it away, or download in another folder.`);
      throw error;
    }
    io.stdout.write(`Saved ${target} (${file.bytes} bytes).\n`);
  }
  if (chosen.length === 0) io.stdout.write(`Run ${runId} has no files.\n`);
}

/** The run as `get` prints it: each file with the link that downloads it. */
export function withDownloadLinks(run: RunView, apiUrl: string) {
  return {
    ...run,
    files: run.files.map((f) => ({ ...f, download: `${apiUrl}/v1/runs/${run.runId}/files/${encodeURIComponent(f.name)}` })),
  };
}
