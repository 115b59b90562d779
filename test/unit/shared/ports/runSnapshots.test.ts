import { S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalS3 } from "../../../../infra/local/s3.js";
import type { Ports } from "../../../../shared/ports/index.js";
import type { RunSnapshots } from "../../../../shared/ports/runSnapshots.js";
import { InterruptStore } from "../../../../shared/store/interrupts.js";
import { RunSnapshotStore } from "../../../../shared/store/runSnapshots.js";
import { RunStore } from "../../../../shared/store/runs.js";
import { S3FileStore } from "../../../../shared/store/s3Files.js";
import { TaskStore } from "../../../../shared/store/tasks.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { MemoryInterrupts } from "../../../../shared/testing/memoryInterrupts.js";
import { MemoryRunSnapshots } from "../../../../shared/testing/memoryRunSnapshots.js";
import { MemoryRuns } from "../../../../shared/testing/memoryRuns.js";
import { MemoryTasks } from "../../../../shared/testing/memoryTasks.js";
import { freshId, TEST_CREDENTIALS, useDynalite } from "../../../support/dynalite.js";
import { pendingInterrupt, runRecord } from "../../../support/records.js";

/**
 * The run snapshots port's contract, over the ports whose records it gathers (runs, tasks, files,
 * interrupts): fake and DynamoDB adapter alike (its one-request read: test/unit/shared/store/runSnapshots.test.ts).
 */

type Writers = Pick<Ports, "runs" | "tasks" | "files" | "interrupts">;

const dynamo = useDynalite();
const s3 = new LocalS3({ region: "us-east-1", ...TEST_CREDENTIALS });
let s3Endpoint: string;
beforeAll(async () => {
  s3Endpoint = await s3.listen();
  s3.createBucket("files");
});
afterAll(() => s3.close());

describe.each([
  {
    name: "in memory",
    make: (): { writers: Writers; snapshots: RunSnapshots } => {
      const runs = new MemoryRuns();
      const writers = { runs, tasks: new MemoryTasks(runs), files: new MemoryFileStore(), interrupts: new MemoryInterrupts() };
      return { writers, snapshots: new MemoryRunSnapshots(writers) };
    },
  },
  {
    name: "DynamoDB adapter on dynalite",
    make: (): { writers: Writers; snapshots: RunSnapshots } => {
      const table = dynamo.table();
      const runs = new RunStore(table, 1);
      const files = new S3FileStore({
        table,
        s3: new S3Client({ endpoint: s3Endpoint, region: "us-east-1", credentials: TEST_CREDENTIALS, forcePathStyle: true }),
        bucket: "files",
        retentionDays: 1,
        tenantOf: async (runId) => (await runs.get(runId))?.tenantId,
      });
      return {
        writers: { runs, tasks: new TaskStore(table, 1), files, interrupts: new InterruptStore(table, 1) },
        snapshots: new RunSnapshotStore(table),
      };
    },
  },
])("run snapshots port: $name", ({ make }) => {
  it("a run with its tasks in iteration then task order, its files by name, its interrupts without their task tokens", async () => {
    const { writers, snapshots } = make();
    const runId = freshId("run");
    await writers.runs.create(runRecord(runId, { status: "running", tenantId: "tenant-a" }));
    for (const [iteration, taskId] of [
      [1, "s2.t1"],
      [0, "s1.t10"],
      [0, "s1.t2"],
      [0, "s1.t1"],
    ] as const)
      await writers.tasks.put(runId, { iteration, stepIndex: iteration, taskId, title: taskId, text: `do ${taskId}`, status: "pending" });
    await writers.files.put(runId, "report.md", "# Report\n", { description: "The report" });
    await writers.files.put(runId, "data.csv", "a,b\n1,2\n");
    await writers.interrupts.open(pendingInterrupt(runId, "int_2"));
    await writers.interrupts.open(pendingInterrupt(runId, "int_1", { summary: "Write report.md" }));
    await writers.interrupts.attachToken(runId, "int_1", "secret-task-token");
    // Another run's records stay out.
    const other = freshId("run");
    await writers.runs.create(runRecord(other, { tenantId: "tenant-a" }));
    await writers.files.put(other, "other.md", "x");

    const snapshot = await snapshots.get(runId);
    expect(snapshot?.run).toEqual(await writers.runs.get(runId));
    expect(snapshot?.tasks.map((t) => t.taskId)).toEqual(["s1.t1", "s1.t2", "s1.t10", "s2.t1"]);
    expect(snapshot?.tasks[0]).toMatchObject({ iteration: 0, title: "s1.t1", text: "do s1.t1", status: "pending" });
    expect(snapshot?.files.map((f) => [f.name, f.bytes])).toEqual([
      ["data.csv", 8],
      ["report.md", 9],
    ]);
    expect(snapshot?.files[1]).toMatchObject({ description: "The report", contentType: "text/markdown" });
    expect(snapshot?.interrupts.map((i) => [i.interruptId, i.summary])).toEqual([
      ["int_1", "Write report.md"],
      ["int_2", "Run write_artifact"],
    ]);
    expect(JSON.stringify(snapshot)).not.toContain("secret-task-token");
  });

  it("a run without tasks, files or interrupts has empty lists; a run that does not exist has no snapshot", async () => {
    const { writers, snapshots } = make();
    const runId = freshId("run");
    await writers.runs.create(runRecord(runId));
    expect(await snapshots.get(runId)).toEqual({ run: await writers.runs.get(runId), tasks: [], files: [], interrupts: [] });
    expect(await snapshots.get(freshId("run"))).toBeUndefined();
  });
});
