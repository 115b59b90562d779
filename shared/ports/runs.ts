import type { RunRecord, RunStatus, Usage } from "../contracts/run.js";

/** Fields of a run that may change after it was created. */
export type RunPatch = Partial<Omit<RunRecord, "runId" | "tenantId" | "schemaVersion" | "usage" | "createdAt" | "forkCount">>;

/**
 * The runs port: run records and their status changes, each change conditional on the status it
 * expects (a late or repeated step cannot overwrite a run that has ended). Adapter: RunStore
 * (DynamoDB); fake: shared/testing/memoryRuns.ts.
 */
export interface Runs {
  /** Creates the run; false if a run with this id exists already. */
  create(run: RunRecord): Promise<boolean>;
  get(runId: string): Promise<RunRecord | undefined>;
  /** queued → running, once; the run as it is now, or undefined if it was not queued. */
  startIfQueued(runId: string): Promise<RunRecord | undefined>;
  /** Only the status (a cheap read between an agent's rounds). */
  status(runId: string): Promise<RunStatus | undefined>;
  /** Sets fields (and adds usage); with `onlyIf`, only in one of those statuses. Whether it applied. */
  update(runId: string, patch: RunPatch, onlyIf?: readonly RunStatus[], usage?: Partial<Usage>): Promise<boolean>;
  /** Ends the run once, from one of `from`, claiming its slot's release; undefined if it had ended. */
  end(runId: string, patch: RunPatch, from: readonly RunStatus[]): Promise<RunRecord | undefined>;
  /** An ended run runs again (resume after a failure). Whether it applied. */
  reopen(runId: string, from: readonly RunStatus[]): Promise<boolean>;
  /** Adds to the usage counters atomically. */
  addUsage(runId: string, delta: Partial<Usage>): Promise<void>;
  /** Counts a fork of the run, before the fork starts: an atomic add, so forks made at once all count. False if there is no such run. */
  countFork(runId: string): Promise<boolean>;
}
