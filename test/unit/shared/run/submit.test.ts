import { describe, expect, it } from "vitest";
import { acceptRun } from "../../../../shared/run/acceptRun.js";
import { submitRun } from "../../../../shared/run/submit.js";
import { memoryPorts } from "../../../../shared/testing/memoryPorts.js";

/** Submitting a run (the API's core) over in-memory ports: what is recorded, started, taken and given back. */

const links = { api: "http://api.test", stream: "http://stream.test", console: false };
const request = { input: "What is 2+2?", mode: "react" as const };

function setup(limit = 2) {
  return memoryPorts({ settings: { limits: { maxActiveRunsPerTenant: limit } } });
}

describe("submitRun", () => {
  it("records the run queued, starts its execution named after it, and takes one of the tenant's slots", async () => {
    const { ports, fakes } = setup();
    const { run, replayed } = await submitRun(ports, "tenant_a", request, { links });
    expect(replayed).toBe(false);
    expect(await ports.runs.get(run.runId)).toMatchObject({
      status: "queued",
      input: "What is 2+2?",
      tenantId: "tenant_a",
      executionArn: ports.executions.arnFor(run.runId),
    });
    expect(await fakes.executions.describe(run.executionArn)).toBe("RUNNING");
    expect(await fakes.activeRuns.count("tenant_a")).toBe(1);
    expect(run.links?.self).toBe(`http://api.test/v1/runs/${run.runId}`);
  });

  it("the same Idempotency-Key and body give back the same run: no second run, execution or slot", async () => {
    const { ports, fakes } = setup();
    const first = await submitRun(ports, "tenant_a", request, { links, idempotencyKey: "key-1" });
    const again = await submitRun(ports, "tenant_a", request, { links, idempotencyKey: "key-1" });
    expect(again).toMatchObject({ replayed: true, run: { runId: first.run.runId } });
    expect(fakes.runs.records.size).toBe(1);
    expect(fakes.executions.calls.filter((c) => c.action === "start")).toHaveLength(1);
    expect(await fakes.activeRuns.count("tenant_a")).toBe(1);
    // Another tenant's key of the same name is its own.
    expect((await submitRun(ports, "tenant_b", request, { links, idempotencyKey: "key-1" })).replayed).toBe(false);
  });

  it("the same Idempotency-Key with another body is a 409 that creates nothing", async () => {
    const { ports, fakes } = setup();
    await submitRun(ports, "tenant_a", request, { links, idempotencyKey: "key-1" });
    await expect(
      submitRun(ports, "tenant_a", { ...request, input: "Something else" }, { links, idempotencyKey: "key-1" }),
    ).rejects.toMatchObject({ statusCode: 409 });
    expect(fakes.runs.records.size).toBe(1);
    expect(await fakes.activeRuns.count("tenant_a")).toBe(1);
  });

  it("when the execution cannot be started: 503, the run ends failed, its slot and key are given back, and a retry with the key creates a run", async () => {
    const { ports, fakes } = setup();
    const start = fakes.executions.start.bind(fakes.executions);
    fakes.executions.start = async () => {
      throw new Error("Step Functions is unavailable");
    };
    const error = await submitRun(ports, "tenant_a", request, { links, idempotencyKey: "key-1" }).catch((e) => e);
    expect(error).toMatchObject({ statusCode: 503 });
    const [failed] = fakes.runs.records.values();
    expect(failed).toMatchObject({ status: "failed", error: { code: "start_failed" } });
    expect(await fakes.activeRuns.count("tenant_a")).toBe(0);
    expect(fakes.events.all(failed!.runId).map((e) => e.type)).toEqual(["run.failed"]);

    fakes.executions.start = start;
    const retried = await submitRun(ports, "tenant_a", request, { links, idempotencyKey: "key-1" });
    expect(retried.replayed).toBe(false);
    expect(retried.run.runId).not.toBe(failed!.runId);
    expect(await fakes.activeRuns.count("tenant_a")).toBe(1);
  });

  it("when recording the run fails, the slot and the key are given back (no run is left behind)", async () => {
    const { ports, fakes } = setup();
    const create = fakes.runs.create.bind(fakes.runs);
    fakes.runs.create = async () => {
      throw new Error("the table is unavailable");
    };
    await expect(submitRun(ports, "tenant_a", request, { links, idempotencyKey: "key-1" })).rejects.toThrow("the table is unavailable");
    expect(await fakes.activeRuns.count("tenant_a")).toBe(0);
    fakes.runs.create = create;
    expect((await submitRun(ports, "tenant_a", request, { links, idempotencyKey: "key-1" })).replayed).toBe(false);
  });

  it("over the tenant's limit: 429 with a retry hint; nothing is recorded and the key is free", async () => {
    const { ports, fakes } = setup(1);
    await submitRun(ports, "tenant_a", request, { links });
    const error = await submitRun(ports, "tenant_a", request, { links, idempotencyKey: "key-2" }).catch((e) => e);
    expect(error).toMatchObject({ statusCode: 429, retryAfterSeconds: 5 });
    expect(fakes.runs.records.size).toBe(1);
    expect(fakes.idempotency.claims.size).toBe(0);
    expect(await fakes.activeRuns.count("tenant_a")).toBe(1);
  });

  it("an unknown upload or a webhook to a private address is a 400 that takes nothing", async () => {
    const { ports, fakes } = setup();
    await expect(submitRun(ports, "tenant_a", { ...request, files: ["file_nope"] }, { links })).rejects.toMatchObject({ statusCode: 400 });
    await expect(
      submitRun(ports, "tenant_a", { ...request, webhook: { url: "http://169.254.169.254/latest" } }, { links }),
    ).rejects.toMatchObject({ statusCode: 400 });
    expect(fakes.runs.records.size).toBe(0);
    expect(await fakes.activeRuns.count("tenant_a")).toBe(0);
    expect(fakes.executions.calls).toEqual([]);
  });

  it("a tenant's uploads become the run's files", async () => {
    const { ports, fakes } = setup();
    const upload = await fakes.files.upload("tenant_a", "data.csv", Buffer.from("a,b\n1,2\n"), "text/csv");
    const { run } = await submitRun(ports, "tenant_a", { ...request, files: [upload.fileId] }, { links });
    expect((await fakes.files.list(run.runId)).map((f) => f.name)).toEqual(["data.csv"]);
    await expect(submitRun(ports, "tenant_b", { ...request, files: [upload.fileId] }, { links })).rejects.toMatchObject({
      statusCode: 400,
    });
  });
});

/** A run's input is counted in UTF-8 bytes (Chinese, Japanese and Korean text is 3 bytes a character). */
describe("acceptRun: the input limit in bytes", () => {
  const cjk = (bytes: number) => "数".repeat(bytes / 3);

  it("takes a Chinese input of exactly MAX_INPUT_BYTES and refuses one a byte over with 413, creating nothing", async () => {
    const { ports, fakes } = memoryPorts({ settings: { limits: { maxInputBytes: 96_000 } } });
    const { run } = await acceptRun(ports, "tenant_a", { input: cjk(96_000), mode: "react" }, { links });
    expect(run.input).toBe(cjk(96_000));
    expect(run.input.length).toBe(32_000);

    const refused = await acceptRun(ports, "tenant_a", { input: `${cjk(96_000)}a`, mode: "react" }, { links }).catch((e) => e);
    expect(refused).toMatchObject({ statusCode: 413, code: "payload_too_large", details: { bytes: 96_001, limit: 96_000 } });
    expect(refused.message).toBe("input has 96001 bytes (UTF-8); the limit is 96000 bytes");
    expect(fakes.runs.records.size).toBe(1);
    // 32,001 characters of ASCII are within the limit (the limit once counted characters).
    expect((await acceptRun(ports, "tenant_a", { input: "a".repeat(32_001), mode: "react" }, { links })).run.input).toHaveLength(32_001);
  });

  it("an input over 100,000 bytes is kept whole as the run file input.md, the record keeping its beginning and a pointer", async () => {
    const { ports, fakes } = memoryPorts({ settings: { limits: { maxInputBytes: 200_000 } } });
    const input = "这是一个很长的问题。".repeat(6_000); // 180,000 bytes
    const { run } = await acceptRun(ports, "tenant_a", { input, mode: "react" }, { links });
    const [beginning, pointer] = run.input.split("\n\n[");
    expect(input.startsWith(beginning!)).toBe(true);
    expect(Buffer.byteLength(beginning!)).toBeGreaterThan(99_997);
    expect(Buffer.byteLength(run.input)).toBeLessThan(100_200);
    expect(pointer).toBe("cut at 100000 of 180000 bytes: the whole text is the run's file input.md]");
    expect(Buffer.from((await fakes.files.get(run.runId, "input.md"))!.body).toString("utf8")).toBe(input);
  });
});
