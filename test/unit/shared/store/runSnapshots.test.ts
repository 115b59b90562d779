import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTable } from "../../../../functions/awsClients.js";
import { ensureTable, startDynamo } from "../../../../infra/local/dynamo.js";
import { LocalS3 } from "../../../../infra/local/s3.js";
import { emptyUsage, type RunRecord } from "../../../../shared/contracts/run.js";
import { EventLog } from "../../../../shared/store/events.js";
import { InterruptStore } from "../../../../shared/store/interrupts.js";
import { Journal } from "../../../../shared/store/journal.js";
import { RunSnapshotStore } from "../../../../shared/store/runSnapshots.js";
import { RunStore } from "../../../../shared/store/runs.js";
import { S3FileStore } from "../../../../shared/store/s3Files.js";
import type { Table } from "../../../../shared/store/table.js";
import { TaskStore } from "../../../../shared/store/tasks.js";

/**
 * `GET /v1/runs/{id}` reads the run, its tasks, files and interrupts in one DynamoDB request,
 * however long its event log and journal have grown (they live in partitions of their own).
 */

const credentials = { accessKeyId: "local", secretAccessKey: "local" };
let dynamo: Awaited<ReturnType<typeof startDynamo>>;
let s3: LocalS3;
let table: Table;
let requests: string[];

beforeAll(async () => {
  dynamo = await startDynamo({ credentials });
  s3 = new LocalS3({ region: "us-east-1", ...credentials });
  const config = { endpoint: dynamo.endpoint, region: "us-east-1", credentials };
  await ensureTable(new DynamoDBClient(config), "snapshots-test");
  table = connectTable("snapshots-test", config);
  requests = [];
  (await table.client()).middlewareStack.add(
    (next, context) => (args) => {
      requests.push(String(context.commandName));
      return next(args);
    },
    {
      step: "initialize",
    },
  );
});

afterAll(async () => {
  await Promise.all([dynamo?.close(), s3?.close()]);
});

const run = (runId: string, tenantId: string): RunRecord => ({
  schemaVersion: 1,
  runId,
  tenantId,
  sessionId: "s1",
  status: "running",
  requestedMode: "plan_solve",
  input: "Compare two things",
  metadata: {},
  usage: emptyUsage(),
  executionArn: `arn:aws:states:us-east-1:000000000000:execution:sm:${runId}`,
  createdAt: "2026-11-23T10:00:00.000Z",
  updatedAt: "2026-11-23T10:00:00.000Z",
});

describe("RunSnapshotStore", () => {
  it("reads the run with its tasks, files and interrupts in one request, past a long event log and journal", async () => {
    const endpoint = await s3.listen();
    s3.createBucket("files");
    const files = new S3FileStore({
      table,
      s3: new S3Client({ endpoint, region: "us-east-1", credentials, forcePathStyle: true }),
      bucket: "files",
      retentionDays: 1,
      tenantOf: async () => "tenant-a",
    });
    const runId = "run_snapshot";
    await new RunStore(table, 1).create(run(runId, "tenant-a"));
    const tasks = new TaskStore(table, 1);
    for (const taskId of ["s1.t2", "s1.t10", "s1.t1"]) {
      await tasks.put(runId, {
        iteration: 0,
        stepIndex: 0,
        taskId,
        title: taskId,
        text: `do ${taskId}`,
        status: "succeeded",
        result: `done ${taskId}`,
      });
    }
    await tasks.put(runId, { iteration: 1, stepIndex: 1, taskId: "s2.t1", title: "s2.t1", text: "do s2.t1", status: "pending" });
    await files.put(runId, "report.md", "# Report\n", { description: "The report" });
    await new InterruptStore(table, 1).open({
      schemaVersion: 1,
      interruptId: "int_1",
      runId,
      kind: "tool_approval",
      status: "pending",
      summary: "Write report.md",
      toolName: "write_artifact",
      createdAt: "2026-11-23T10:00:01.000Z",
    });
    // A journal and an event log far larger than the run itself.
    const big = "x".repeat(300_000);
    await new Journal(table, 1).commit(runId, {
      records: Array.from({ length: 8 }, (_, round) => ({ scope: "task#0#s1.t1", round, kind: "llm" as const, value: { text: big } })),
    });
    const events = new EventLog(table, 1);
    for (let i = 0; i < 40; i++)
      await events.append(runId, [{ type: "agent.thought", data: { agent: "executor", text: `thought ${i} ${"y".repeat(2_000)}` } }]);

    requests.length = 0;
    const snapshot = await new RunSnapshotStore(table).get(runId);

    expect(requests).toEqual(["QueryCommand"]);
    expect(snapshot!.run).toMatchObject({ runId, tenantId: "tenant-a", status: "running" });
    expect(snapshot!.tasks.map((t) => t.taskId)).toEqual(["s1.t1", "s1.t2", "s1.t10", "s2.t1"]);
    expect(snapshot!.files).toEqual([
      expect.objectContaining({ name: "report.md", description: "The report", contentType: "text/markdown" }),
    ]);
    expect(snapshot!.files[0]).not.toHaveProperty("objectKey");
    expect(snapshot!.interrupts).toEqual([
      expect.objectContaining({ interruptId: "int_1", status: "pending", summary: "Write report.md" }),
    ]);
    expect(snapshot!.interrupts[0]).not.toHaveProperty("taskToken");
    // The log and the journal are still whole where their readers look.
    expect((await events.list(runId, 0, 100)).map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect((await new Journal(table, 1).read(runId, "task#0#s1.t1")).some((record) => record.round === 7 && record.kind === "llm")).toBe(
      true,
    );
  });

  it("answers undefined for a run that does not exist", async () => {
    expect(await new RunSnapshotStore(table).get("run_missing")).toBeUndefined();
  });
});
