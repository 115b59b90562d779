import { S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalS3 } from "../../../../infra/local/s3.js";
import { type FileStore, fileText } from "../../../../shared/ports/files.js";
import { S3FileStore } from "../../../../shared/store/s3Files.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The files port's contract: the in-memory fake and the S3 adapter (bytes on a local S3, metadata on dynalite). */

const credentials = { accessKeyId: "local", secretAccessKey: "local" };
const dynamo = useDynalite();
let s3: LocalS3 | undefined;
let endpoint = "";

beforeAll(async () => {
  s3 = new LocalS3({ region: "us-east-1", ...credentials });
  endpoint = await s3.listen();
  s3.createBucket("files");
});
afterAll(async () => s3?.close());

describe.each([
  { name: "in memory", make: (): FileStore => new MemoryFileStore() },
  {
    name: "S3 adapter (local S3 and dynalite)",
    make: (): FileStore =>
      new S3FileStore({
        table: dynamo.table(),
        s3: new S3Client({ endpoint, region: "us-east-1", credentials, forcePathStyle: true }),
        bucket: "files",
        retentionDays: 1,
        tenantOf: async () => "tenant_1",
      }),
  },
])("files port: $name", ({ make }) => {
  it("a put stores the bytes and what is known of them; files list in name order", async () => {
    const files = make();
    const runId = freshId("run");
    const meta = await files.put(runId, "b.md", "# B", { description: "second" });
    await files.put(runId, "a.csv", "x,y\n1,2\n");
    expect(meta).toMatchObject({ name: "b.md", contentType: "text/markdown", bytes: 3, description: "second" });
    expect(fileText((await files.get(runId, "b.md"))!)).toBe("# B");
    expect((await files.list(runId)).map((f) => [f.name, f.contentType])).toEqual([
      ["a.csv", "text/csv"],
      ["b.md", "text/markdown"],
    ]);
    expect(await files.get(runId, "missing.md")).toBeUndefined();
  });

  it("a put with the key the file was written with writes nothing again; another key overwrites", async () => {
    const files = make();
    const runId = freshId("run");
    const first = await files.put(runId, "report.md", "first", { idempotencyKey: "run:task#0#s1.t1:0:call_1" });
    const again = await files.put(runId, "report.md", "second attempt", { idempotencyKey: "run:task#0#s1.t1:0:call_1" });
    expect(again).toEqual(first);
    expect(fileText((await files.get(runId, "report.md"))!)).toBe("first");
    await files.put(runId, "report.md", "a later call", { idempotencyKey: "run:task#0#s1.t1:1:call_2" });
    expect(fileText((await files.get(runId, "report.md"))!)).toBe("a later call");
    await files.put(runId, "report.md", "no key");
    expect(fileText((await files.get(runId, "report.md"))!)).toBe("no key");
  });

  it("keeps the task that wrote a file, in get and list; a file of no task has none", async () => {
    const files = make();
    const runId = freshId("run");
    await files.put(runId, "a.md", "# A", { taskId: "s1.t1" });
    await files.put(runId, "upload.txt", "x");
    expect(await files.get(runId, "a.md")).toMatchObject({ taskId: "s1.t1" });
    expect((await files.list(runId)).map((f) => [f.name, f.taskId])).toEqual([
      ["a.md", "s1.t1"],
      ["upload.txt", undefined],
    ]);
  });
});
