import type { Interrupt } from "../contracts/interrupts.js";
import type { RunRecord } from "../contracts/run.js";
import type { FileMeta } from "./files.js";
import type { TaskRecord } from "./tasks.js";

/** A run as `GET /v1/runs/{id}` shows it: the record and what lies beside it. */
export interface RunSnapshot {
  run: RunRecord;
  /** In iteration, then task-number order. */
  tasks: TaskRecord[];
  /** In name order. */
  files: FileMeta[];
  /** In id order, without their task tokens. */
  interrupts: Interrupt[];
}

/**
 * The run snapshots port: a run with its tasks, files and interrupts, in one read. Adapter:
 * RunSnapshotStore (DynamoDB); fake: shared/testing/memoryRunSnapshots.ts; contract:
 * test/unit/shared/ports/runSnapshots.test.ts.
 */
export interface RunSnapshots {
  /** Undefined for a run that does not exist. */
  get(runId: string): Promise<RunSnapshot | undefined>;
}
