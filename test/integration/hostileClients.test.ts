import { readFileSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_MAX_BODY_BYTES, LAMBDA_SYNC_EVENT_BYTES, MAX_JSON_BODY_BYTES, MULTIPART_ROOM_BYTES } from "../../functions/bodyLimits.js";
import { INLINE_UPLOAD_BYTES } from "../../shared/contracts/uploadLimits.js";
import { Client, type ErrorBody } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * Clients that send what no well-behaved client would (issue 21, item 4), against the whole local
 * stack in its own process: multipart bodies cut off, bodies far over the limits (declared or
 * chunked, with and without a key), JSON nested past what the table stores. Each gets a 4xx, and
 * the stack keeps answering and running other work.
 */

let stack: RunningStack;
let client: Client;

beforeAll(async () => {
  stack = await startStack({ INTERRUPT_TIMEOUT_SECONDS: "3600" });
  client = new Client(stack.url, stack.apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

const MiB = 1024 * 1024;

/** The stack still answers, and a run submitted now is carried to its end. */
async function stillServing() {
  const health = await fetch(`${stack.url}/health`);
  expect(health.status).toBe(200);
  const { runId } = await client.submit({ input: "What is 2+2?", mode: "react" });
  const { run } = await client.waitForEnd(runId);
  expect(run.status).toBe("succeeded");
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** Bytes of the body written when the answer came (or all of them). */
  sent: number;
}

/**
 * POSTs `bytes` bytes of body, in 1 MiB writes that wait for the socket, declaring the length or
 * (without `declare`) chunked; stops writing as soon as an answer arrives.
 */
function push(path: string, bytes: number, headers: Record<string, string>, declare: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest(`${stack.url}${path}`, {
      method: "POST",
      headers: { ...headers, ...(declare ? { "content-length": String(bytes) } : {}) },
    });
    req.on("response", (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        req.destroy();
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined, sent });
      });
    });
    req.on("error", (error) => (answered ? undefined : reject(error)));
    const chunk = Buffer.alloc(MiB, 0x61);
    const write = () => {
      while (!answered && sent < bytes) {
        const part = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
        sent += part.length;
        if (!req.write(part)) return void req.once("drain", write);
      }
      if (!answered) req.end();
    };
    write();
  });
}

/** Resident and peak memory of the stack's process, from /proc (the peak reset first when asked). */
function memoryOfStack(resetPeak = false): { rssMiB: number; peakMiB: number } {
  if (resetPeak) writeFileSync(`/proc/${stack.pid}/clear_refs`, "5");
  const status = readFileSync(`/proc/${stack.pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

describe("a multipart upload cut off", () => {
  it("inside its file part → 400 invalid_multipart; the stack keeps answering and runs go on", async () => {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(64 * 1024).fill(7)]), "data.bin");
    const request = new Request("http://x/", { method: "POST", body: form });
    const whole = Buffer.from(await request.arrayBuffer());
    const type = request.headers.get("content-type")!;
    for (const cut of [whole.subarray(0, 20_000), whole.subarray(0, whole.length - 10)]) {
      const res = await fetch(`${stack.url}/v1/files`, {
        method: "POST",
        headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": type },
        body: cut,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.code).toBe("invalid_multipart");
    }
    await stillServing();
  });

  it("by the client closing the connection mid-body: nothing is answered, and nothing stops", async () => {
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${stack.url}/v1/files`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${stack.apiKey}`,
          "content-type": "multipart/form-data; boundary=xyz",
          "content-length": "100000",
        },
      });
      req.on("error", () => resolve());
      req.on("close", () => resolve());
      req.write('--xyz\r\ncontent-disposition: form-data; name="file"; filename="a.bin"\r\n\r\npartial', () => req.destroy());
    });
    await stillServing();
  });
});

describe("bodies over the limits", () => {
  const json = { "content-type": "application/json" };
  const key = () => ({ authorization: `Bearer ${stack.apiKey}` });

  it("200 MiB declared, with no key → 401 before the body is read", async () => {
    const res = await push("/v1/runs", 200 * MiB, json, true);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
    expect(res.sent).toBeLessThan(64 * MiB);
  });

  it("200 MiB declared, with a bad key → 401 before the body is read", async () => {
    const res = await push("/v1/files?name=a.bin", 200 * MiB, { authorization: "Bearer sk_wrong" }, true);
    expect(res.status).toBe(401);
    expect(res.sent).toBeLessThan(64 * MiB);
  });

  it("declared over a JSON route's limit, with a key → 413 before the body is read", async () => {
    const res = await push("/v1/runs", 200 * MiB, { ...json, ...key() }, true);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: "payload_too_large", message: expect.stringContaining(String(MAX_JSON_BODY_BYTES)) });
    expect(res.sent).toBeLessThan(64 * MiB);
  });

  it("chunked (no Content-Length) past a JSON route's limit → 413, reading stopped at the limit", async () => {
    const res = await push("/v1/runs", 200 * MiB, { ...json, ...key() }, false);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
    expect(res.sent).toBeLessThan(64 * MiB);
  });

  it("an inline upload over its limit (4 MiB of file plus multipart framing, under API Gateway's 10 MiB) → 413 (declared or chunked)", async () => {
    const limit = INLINE_UPLOAD_BYTES + MULTIPART_ROOM_BYTES;
    expect(limit).toBeLessThan(GATEWAY_MAX_BODY_BYTES);
    for (const declare of [true, false]) {
      const res = await push("/v1/files?name=big.bin", limit + 1, { ...key(), "content-type": "application/octet-stream" }, declare);
      expect(res.status, `declared: ${declare}`).toBe(413);
      expect(res.body.error).toMatchObject({ code: "payload_too_large", message: expect.stringContaining(String(limit)) });
    }
  });

  it("the largest inline upload fits Lambda's 6 MB event (the file base64-encoded in it): stored; a larger one → 413", async () => {
    const binary = { ...key(), "content-type": "application/octet-stream" };
    const fits = await push("/v1/files?name=four.bin", INLINE_UPLOAD_BYTES, binary, true);
    expect(fits.status).toBe(201);
    expect(fits.body.bytes).toBe(INLINE_UPLOAD_BYTES);
    expect(Math.ceil(INLINE_UPLOAD_BYTES / 3) * 4).toBeLessThan(LAMBDA_SYNC_EVENT_BYTES);
    const over = await push("/v1/files?name=five.bin", 5 * MiB, binary, true);
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe("payload_too_large");
  });

  it("200 MiB chunked to the upload route, with a key: 413, and the stack's memory grows by far less than the body", async () => {
    const before = memoryOfStack(true);
    const res = await push("/v1/files?name=huge.bin", 200 * MiB, { ...key(), "content-type": "application/octet-stream" }, false);
    const after = memoryOfStack();
    console.log(
      `stack memory, 200 MiB chunked upload: RSS ${before.rssMiB.toFixed(0)} → ${after.rssMiB.toFixed(0)} MiB, peak during it ${after.peakMiB.toFixed(0)} MiB; ${(res.sent / MiB).toFixed(0)} MiB written before the answer`,
    );
    expect(res.status).toBe(413);
    // At most the route's limit (10 MiB) is held, twice perhaps while it is joined: far under 200 MiB.
    expect(after.peakMiB - before.rssMiB).toBeLessThan(100);
    expect(after.rssMiB - before.rssMiB).toBeLessThan(100);
  });

  it("after all that, the stack answers and runs go on", async () => {
    await stillServing();
  });
});

describe("JSON nested past what the table stores", () => {
  const REPORT_INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";

  /** An edit decision whose arguments carry `containers` arrays within each other around a string. */
  const editNested = (containers: number) =>
    `{"decision":"edit","arguments":{"filename":"report.md","content":"# Edited","extra":${"[".repeat(containers)}"x"${"]".repeat(containers)}}}`;

  async function pausedAtWrite() {
    const { runId } = await client.submit({ input: REPORT_INPUT, mode: "plan_solve", approval: { tools: "write" } });
    const { pending } = await client.waitForPending(runId, 1);
    expect(pending[0]).toMatchObject({ kind: "tool_approval", toolName: "write_artifact" });
    return { runId, interruptId: pending[0].interruptId as string };
  }

  it("an edit nested 100,000 deep, or 33 levels, → 400 naming the limit; the run still waits, then is approved and succeeds", async () => {
    const { runId, interruptId } = await pausedAtWrite();
    const before = await client.allEvents(runId);
    // The body's object, `arguments` and the arrays: 2 + 30 objects or arrays around "x" are 33 levels.
    for (const containers of [100_000, 30]) {
      const refused = await client.decide<ErrorBody>(runId, interruptId, editNested(containers));
      expect(refused.status, `${containers} arrays`).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "nesting_too_deep", message: expect.stringContaining("32 levels") });
    }
    const still = await client.run(runId);
    expect(still.status).toBe("awaiting_input");
    expect(still.pendingInterrupts.map((i: any) => [i.interruptId, i.resolution])).toEqual([[interruptId, undefined]]);
    expect(await client.allEvents(runId)).toEqual(before);

    expect((await client.decide(runId, interruptId, { decision: "approve" })).status).toBe(202);
    const { run } = await client.waitForEnd(runId);
    expect(run.status).toBe("succeeded");
  });

  it("an edit at the limit (32 levels) is stored and carried out", async () => {
    const { runId, interruptId } = await pausedAtWrite();
    const decided = await client.decide(runId, interruptId, editNested(29));
    expect(decided.status).toBe(202);
    let extra = decided.body.resolution?.arguments?.extra;
    for (let i = 0; i < 29; i++) extra = (extra as unknown[])[0];
    expect(extra).toBe("x");
    const { run } = await client.waitForEnd(runId);
    expect(run.status).toBe("succeeded");
    expect(run.files.map((f: any) => [f.name, f.bytes])).toEqual([["report.md", Buffer.byteLength("# Edited")]]);
  });
});
