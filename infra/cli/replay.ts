import type { StepwiseClient } from "../../shared/apiClient/client.js";
import type { ReplayComparison } from "../../shared/contracts/replay.js";
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
    const { runId: replayId } = await client.replayRun(runId);
    let comparison = await client.compareReplay(replayId);
    while (comparison.status === "running") {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      comparison = await client.compareReplay(replayId);
    }
    if (comparison.status !== "identical") failed++;
    io.stdout.write(describe(runId, comparison));
  }
  io.stdout.write(`${runIds.length - failed} of ${runIds.length} replayed identically.\n`);
  return failed ? EXIT.runFailed : EXIT.ok;
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
