import { parseArgs } from "node:util";
import { type ExecutionListItem, ListExecutionsCommand, ListStateMachineVersionsCommand, SFNClient } from "@aws-sdk/client-sfn";

/** How long after it ended a failed, timed-out or aborted execution can still be redriven (and runs its version again). */
export const REDRIVE_DAYS = 14;

export interface VersionUse {
  versionArn: string;
  /** Executions still running on it. */
  running: number;
  /** Executions ended failed, timed out or aborted within the redrive window: a redrive runs this version again. */
  redrivable: number;
  /** The newest version (new runs start on it through the alias): never to be deleted. */
  newest: boolean;
}

/**
 * Which versions of the state machine still have executions, before old ones are pruned (Step
 * Functions keeps at most 1,000 versions per state machine). A version is in use while an execution
 * runs on it, or while one that ended unsuccessfully can still be redriven (`POST /v1/runs/{id}/resume`).
 */
export async function versionsInUse(sfn: SFNClient, stateMachineArn: string, now = Date.now()): Promise<VersionUse[]> {
  const versions: string[] = [];
  let token: string | undefined;
  do {
    const page = await sfn.send(new ListStateMachineVersionsCommand({ stateMachineArn, nextToken: token, maxResults: 1_000 }));
    for (const version of page.stateMachineVersions ?? [])
      if (version.stateMachineVersionArn) versions.push(version.stateMachineVersionArn);
    token = page.nextToken;
  } while (token);
  const since = now - REDRIVE_DAYS * 24 * 3600 * 1000;
  const uses: VersionUse[] = [];
  // Newest first, as Step Functions lists them.
  for (const [i, versionArn] of versions.entries()) {
    const executions: ExecutionListItem[] = [];
    let next: string | undefined;
    do {
      const page = await sfn.send(new ListExecutionsCommand({ stateMachineArn: versionArn, nextToken: next, maxResults: 1_000 }));
      executions.push(...(page.executions ?? []));
      next = page.nextToken;
    } while (next);
    uses.push({
      versionArn,
      running: executions.filter((e) => e.status === "RUNNING").length,
      redrivable: executions.filter(
        (e) => ["FAILED", "TIMED_OUT", "ABORTED"].includes(e.status ?? "") && e.stopDate && e.stopDate.getTime() >= since,
      ).length,
      newest: i === 0,
    });
  }
  return uses;
}

/** The versions that may be deleted: no execution running or redrivable on them, and not the newest. */
export const prunable = (uses: VersionUse[]) => uses.filter((u) => !u.newest && u.running === 0 && u.redrivable === 0);

async function main() {
  const { values } = parseArgs({ options: { "state-machine": { type: "string" }, region: { type: "string" } } });
  const arn = values["state-machine"];
  if (!arn) {
    console.error("Usage: npm run versions:in-use -- --state-machine <StateMachineArn output> [--region <region>]");
    process.exit(2);
  }
  const sfn = new SFNClient({ region: values.region });
  const uses = await versionsInUse(sfn, arn);
  for (const use of uses) {
    const why = [
      use.newest ? "newest (the alias)" : "",
      use.running ? `${use.running} running` : "",
      use.redrivable ? `${use.redrivable} redrivable` : "",
    ].filter(Boolean);
    console.log(`${use.versionArn}\t${why.length ? `in use: ${why.join(", ")}` : "unused: may be deleted"}`);
  }
  console.log(`${uses.length} versions, ${prunable(uses).length} may be deleted (of at most 1,000 kept).`);
}

if (process.argv[1]?.endsWith("versionsInUse.ts")) await main();
