import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { StepwiseClient } from "../../shared/apiClient/client.js";
import { ApiError } from "../../shared/apiClient/errors.js";
import type { ReplayComparison } from "../../shared/contracts/replay.js";
import { UsageError } from "./args.js";
import { EXIT } from "./exitCodes.js";
import type { Io } from "./follow.js";

/** How often a replay's comparison is asked for while it runs (a replay makes no model call: it is quick). */
const POLL_MS = 300;

/**
 * `stepwise replay <runId>...`: each ended run replayed from its journal, one after another, a line
 * each; a divergence is printed with both sides. Exit 0 when every replay was identical, 1 otherwise:
 * a regression suite made of real runs.
 */
export async function replayRuns(client: StepwiseClient, runIds: readonly string[], io: Pick<Io, "stdout">): Promise<number> {
  let failed = 0;
  for (const runId of runIds) {
    const comparison = await replayed(client, runId);
    if (comparison.status !== "identical") failed++;
    io.stdout.write(describe(runId, comparison));
  }
  io.stdout.write(`${runIds.length - failed} of ${runIds.length} replayed identically.\n`);
  return failed ? EXIT.runFailed : EXIT.ok;
}

/**
 * `stepwise replay --dir <folder>`: each exported run in the folder (`*.json`, GET
 * /v1/runs/{id}/export documents, in name order) imported into the stack and replayed there, a
 * line each; a file the API refuses (it does not parse, or does not fit) is a line naming the
 * problem. Exit 0 when every replay was identical, 1 naming the files that were not: a regression
 * suite of recorded runs, as Temporal's Replayer is for workflow histories.
 */
export async function replayFolder(client: StepwiseClient, dir: string, io: Pick<Io, "stdout">): Promise<number> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`Cannot read the folder ${dir}: ${error.code ?? error.message}.`);
  });
  const files = names.filter((name) => name.endsWith(".json")).sort();
  if (files.length === 0) throw new UsageError(`No exported runs (*.json) in ${dir}: save some with GET /v1/runs/{id}/export.`);
  const failed: string[] = [];
  for (const file of files) {
    let importedFrom: string;
    let runId: string;
    try {
      const document: unknown = JSON.parse(await readFile(join(dir, file), "utf8"));
      ({ runId, importedFrom } = await client.importRun(document));
    } catch (error) {
      // The file's fault (it does not parse, or the API refused it): a line. The key's or the service's: the command's error.
      const refused = error instanceof ApiError && error.status < 500 && error.status !== 429 && !error.isAuth;
      if (!(error instanceof SyntaxError || refused)) throw error;
      failed.push(file);
      io.stdout.write(`${file}: not imported: ${(error as Error).message}\n`);
      continue;
    }
    const comparison = await replayed(client, runId);
    if (comparison.status !== "identical") failed.push(file);
    io.stdout.write(`${file} (${importedFrom}): ${describe(runId, comparison)}`);
  }
  io.stdout.write(`${files.length - failed.length} of ${files.length} replayed identically.\n`);
  if (failed.length) io.stdout.write(`Not identical: ${failed.join(", ")}\n`);
  return failed.length ? EXIT.runFailed : EXIT.ok;
}

/** The run replayed, and what the replay found once it is no longer running. */
async function replayed(client: StepwiseClient, runId: string): Promise<ReplayComparison> {
  const { runId: replayId } = await client.replayRun(runId);
  let comparison = await client.compareReplay(replayId);
  while (comparison.status === "running") {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    comparison = await client.compareReplay(replayId);
  }
  return comparison;
}

function describe(runId: string, c: ReplayComparison): string {
  const head = `${runId} → ${c.runId}: ${c.status}`;
  if (c.status === "identical") return `${head} (${c.eventsCompared} events)\n`;
  if (c.status === "failed") return `${head}: ${c.error?.message ?? ""}\n`;
  const side = (label: string, value: unknown) => `  ${label}: ${JSON.stringify(value, null, 2).replaceAll("\n", "\n  ")}\n`;
  if (c.divergence) {
    const d = c.divergence as {
      scope: string;
      round: number;
      kind: string;
      callId?: string;
      reason: string;
      recorded?: unknown;
      replayed?: unknown;
    };
    return `${head} at ${d.kind} ${d.scope} round ${d.round}${d.callId ? ` call ${d.callId}` : ""} (${d.reason})\n${side("recorded", d.recorded)}${side("replayed", d.replayed)}`;
  }
  return `${head} at event ${c.event?.index} of ${c.event?.source}\n${side("recorded", c.event?.recorded)}${side("replayed", c.event?.replayed)}`;
}
