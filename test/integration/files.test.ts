import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StepwiseClient } from "../../shared/apiClient/client.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { PendingUploadView, UploadLinksView } from "../../shared/contracts/files.js";
import type { FileList, UploadView } from "../../shared/contracts/responses.js";
import { Client, type ErrorBody } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * Files through the whole local stack: upload over the API, attach to a run, list, and download
 * through the redirect to a presigned URL of the S3 endpoint (which checks the signature).
 */
let stack: RunningStack;
let main: Client;
let other: Client;

beforeAll(async () => {
  stack = await startStack({}, ["other"]);
  main = new Client(stack.url, stack.apiKey);
  other = new Client(stack.url, stack.keys.other!);
});

afterAll(async () => {
  await stack?.stop();
});

async function upload(client: Client, name: string, body: Uint8Array | string, type = "application/octet-stream") {
  const res = await fetch(`${client.url}/v1/files?name=${encodeURIComponent(name)}`, {
    method: "POST",
    headers: { authorization: `Bearer ${client.apiKey}`, "content-type": type },
    body,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** GET through the API's redirect; returns the presigned location and the bytes behind it. */
async function download(client: Client, runId: string, name: string) {
  const res = await fetch(`${client.url}/v1/runs/${runId}/files/${encodeURIComponent(name)}`, {
    headers: { authorization: `Bearer ${client.apiKey}` },
    redirect: "manual",
  });
  expect(res.status).toBe(302);
  const location = res.headers.get("location")!;
  const object = await fetch(location);
  return {
    location,
    status: object.status,
    type: object.headers.get("content-type"),
    disposition: object.headers.get("content-disposition"),
    bytes: new Uint8Array(await object.arrayBuffer()),
  };
}

describe("files", () => {
  it("upload → run → list → download round trip, bytes intact, through a presigned URL", async () => {
    const bytes = new Uint8Array(600 * 1024).map((_, i) => (i * 7919) % 256); // binary, over DynamoDB's 400 KB item limit
    const up = await upload(main, "big.bin", bytes);
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({ fileId: expect.stringMatching(/^file_/), name: "big.bin", bytes: bytes.byteLength });
    const csv = await upload(main, "sales.csv", "region,amount\nnorth,10\nsouth,32\n", "text/csv");
    expect(csv.body.contentType).toBe("text/csv");

    const { runId } = await main.submit({ input: "Say hello", mode: "react", files: [up.body.fileId, csv.body.fileId] });
    const run = await main.waitFor(runId);
    expect(run.status).toBe("succeeded");
    expect(run.files.map((f: any) => f.name)).toEqual(expect.arrayContaining(["big.bin", "sales.csv"]));

    const listed = await main.request<FileList>("GET", `/v1/runs/${runId}/files`);
    expect(listed.status).toBe(200);
    const big = listed.body.files.find((f: any) => f.name === "big.bin");
    expect(big).toMatchObject({
      bytes: bytes.byteLength,
      contentType: "application/octet-stream",
      download: `${stack.url}/v1/runs/${runId}/files/big.bin`,
    });

    const got = await download(main, runId, "big.bin");
    expect(got.status).toBe(200);
    expect(new URL(got.location).searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
    expect(Buffer.from(got.bytes).equals(Buffer.from(bytes))).toBe(true);
    expect(got.disposition).toContain("big.bin");
    const text = await download(main, runId, "sales.csv");
    expect(text.type).toBe("text/csv");
    expect(Buffer.from(text.bytes).toString()).toBe("region,amount\nnorth,10\nsouth,32\n");
  });

  it("files are tied to the task that wrote them: file.created names it, task.completed lists it, the view groups them, the answer cites them", async () => {
    const notes = await upload(main, "notes.txt", "Nothing the answer needs.", "text/plain");
    const input = 'use write_artifact {"filename": "a.md", "content": "# A"} and use write_artifact {"filename": "b.md", "content": "# B"}';
    const { runId } = await main.submit({ input, mode: "plan_solve", files: [notes.body.fileId] });
    const { run, events } = await main.waitForEnd(runId);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    const of = <T extends RunEvent["type"]>(type: T) => events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
    const created = Object.fromEntries(of("file.created").map((e) => [e.data.name, e.data.taskId]));
    expect(created).toEqual({ "notes.txt": undefined, "a.md": "s1.t1", "b.md": "s1.t2" });
    expect(of("task.completed").map((e) => [e.data.taskId, e.data.files])).toEqual(
      expect.arrayContaining([
        ["s1.t1", ["a.md"]],
        ["s1.t2", ["b.md"]],
      ]),
    );
    expect(run.tasks.map((t: { taskId: string; files: string[] }) => [t.taskId, t.files])).toEqual([
      ["s1.t1", ["a.md"]],
      ["s1.t2", ["b.md"]],
    ]);
    expect(run.files.map((f: { name: string; taskId?: string }) => [f.name, f.taskId ?? null])).toEqual([
      ["a.md", "s1.t1"],
      ["b.md", "s1.t2"],
      ["notes.txt", null],
    ]);
    // The answer cites the files it relies on: the tasks' two, not the upload no result names.
    expect(run.result!.split("\n").at(-1)).toBe("Files: a.md, b.md");
  });

  it("a presigned URL with a changed signature, key or an expired date is refused", async () => {
    const up = await upload(main, "notes.txt", "secret notes", "text/plain");
    const { runId } = await main.submit({ input: "Say hello", mode: "react", files: [up.body.fileId] });
    await main.waitFor(runId);
    const { location } = await download(main, runId, "notes.txt");
    const forged = new URL(location);
    forged.searchParams.set("X-Amz-Signature", "0".repeat(64));
    expect((await fetch(forged)).status).toBe(403);
    const otherKey = new URL(location.replace("notes.txt", "other.txt"));
    expect((await fetch(otherKey)).status).toBe(403);
    const expired = new URL(location);
    expired.searchParams.set("X-Amz-Date", "20200101T000000Z");
    expect((await fetch(expired)).status).toBe(403);
    const anonymous = new URL(location);
    anonymous.search = "";
    expect((await fetch(anonymous)).status).toBe(403);
  });

  it("multipart uploads work and file names are sanitized", async () => {
    const form = new FormData();
    form.append("file", new Blob(["a,b\n1,2\n"], { type: "text/csv" }), "../../etc/passwd.csv");
    const res = await fetch(`${stack.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${stack.apiKey}` }, body: form });
    const body = (await res.json()) as any;
    expect(res.status).toBe(201);
    expect(body).toMatchObject({ name: "passwd.csv", contentType: "text/csv", bytes: 8 });
    const hidden = await upload(main, "..\\..\\.env", "X=1", "text/plain");
    expect(hidden.body.name).toBe("env");
    const control = await upload(main, "re\u0000po\u001brt\n.md", "# x", "text/plain");
    expect(control.body.name).toBe("report.md");
    // A right-to-left override would show "invoice\u202Efdp.exe" as "invoiceexe.pdf"; zero-width
    // characters would make two names look alike: format characters go, what they hid shows.
    const disguised = await upload(main, "invoice\u202Efdp.exe", "MZ", "application/octet-stream");
    expect(disguised.body.name).toBe("invoicefdp.exe");
    const lookalike = await upload(main, "rep\u200Bort\uFEFF.md\u2028", "# x", "text/plain");
    expect(lookalike.body.name).toBe("report.md");
  });

  it("bad uploads and unknown files get a 4xx and no run", async () => {
    expect((await upload(main, "", "x")).status).toBe(400);
    expect((await upload(main, "../..", "x")).status).toBe(400);
    expect((await upload(main, "empty.txt", "")).status).toBe(400);
    const noName = await fetch(`${stack.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "text/plain" },
      body: "x",
    });
    expect(noName.status).toBe(400);
    const broken = await fetch(`${stack.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "multipart/form-data; boundary=zzz" },
      body: "--zzz\r\nnonsense",
    });
    expect(broken.status).toBe(400);
    const noBoundary = await fetch(`${stack.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "multipart/form-data" },
      body: "x",
    });
    expect(noBoundary.status).toBe(400);

    const unknown = await main.request<ErrorBody>("POST", "/v1/runs", { input: "hi", files: ["file_doesnotexist"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe("unknown_file");
    // Another tenant's upload is unknown too.
    const mine = await upload(main, "mine.txt", "mine", "text/plain");
    const theirs = await other.request("POST", "/v1/runs", { input: "hi", files: [mine.body.fileId] });
    expect(theirs.status).toBe(400);
    expect((await main.request("POST", "/v1/runs", { input: "hi", files: ["../x"] })).status).toBe(400);
  });

  it("a run's files are its tenant's only; missing files are 404", async () => {
    const up = await upload(main, "a.txt", "a", "text/plain");
    const { runId } = await main.submit({ input: "Say hello", mode: "react", files: [up.body.fileId] });
    await main.waitFor(runId);
    expect((await other.request("GET", `/v1/runs/${runId}/files`)).status).toBe(404);
    expect((await other.request("GET", `/v1/runs/${runId}/files/a.txt`)).status).toBe(404);
    expect((await main.request("GET", `/v1/runs/${runId}/files/nope.txt`)).status).toBe(404);
    expect((await main.request("GET", `/v1/runs/${runId}/files/%E0%A4%A`)).status).toBe(404);
  });

  it("a file over the inline limit (4 MiB) is answered with 413 pointing to upload links; an announced file over MAX_UPLOAD_BYTES (5 GiB) too", async () => {
    const over = await upload(main, "big.bin", new Uint8Array(4 * 1024 * 1024 + 1));
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe("payload_too_large");
    expect(over.body.error.message).toContain("JSON {name, bytes}");
    const huge = await main.request("POST", "/v1/files", { name: "huge.bin", bytes: 5 * 1024 ** 3 + 1 });
    expect(huge.status).toBe(413);
  });

  it("a 50 MB file goes up through presigned multipart links (the CLI's client) and comes back with the same SHA-256", async () => {
    const bytes = randomBytes(50 * 1024 * 1024);
    const uploaded = await new StepwiseClient(stack.url, stack.apiKey).uploadFile("large.bin", bytes);
    expect(uploaded).toMatchObject({ fileId: expect.stringMatching(/^file_/), name: "large.bin", bytes: bytes.byteLength });
    const { runId } = await main.submit({ input: "Say hello", mode: "react", files: [uploaded.fileId] });
    expect((await main.waitFor(runId)).status).toBe("succeeded");
    const got = await download(main, runId, "large.bin");
    expect(got.status).toBe(200);
    expect(got.bytes.byteLength).toBe(bytes.byteLength);
    expect(sha256(got.bytes)).toBe(sha256(bytes));
  });

  it("a link signed for 16 MiB cannot take more: an over-size single PUT or part is refused before it is stored", async () => {
    const announced = await main.request<PendingUploadView & ErrorBody>("POST", "/v1/files", { name: "small.bin", bytes: 1024 });
    expect(announced.body.parts).toHaveLength(1);
    const over = await fetch(announced.body.parts[0].url, {
      method: "PUT",
      headers: announced.body.headers,
      body: new Uint8Array(32 * 1024 * 1024),
    });
    expect(over.status).toBe(403);
    expect(await over.text()).toContain("SignatureDoesNotMatch");
    const completed = await main.request<ErrorBody>("POST", `/v1/files/${announced.body.fileId}/complete`, { parts: [] });
    expect(completed.body.error.code).toBe("upload_incomplete"); // no object: nothing was stored

    const large = await main.request<PendingUploadView>("POST", "/v1/files", { name: "two.bin", bytes: 16 * 1024 * 1024 + 10 });
    const last = await fetch(large.body.parts[1].url, { method: "PUT", body: new Uint8Array(16 * 1024 * 1024) });
    expect(last.status).toBe(403); // the last part's link takes its 10 bytes only
    expect((await fetch(large.body.parts[1].url, { method: "PUT", body: new Uint8Array(10) })).status).toBe(200);
  });

  it("expired part links are signed again: the client asks for fresh links and completes the upload", async () => {
    const bytes = randomBytes(16 * 1024 * 1024 * 2 + 100);
    const pending = (await main.request<PendingUploadView>("POST", "/v1/files", { name: "slow.bin", bytes: bytes.byteLength })).body;
    expect(pending.resign).toBe(`${stack.url}/v1/files/${pending.fileId}/parts`);
    // Links as an hour later: S3 refuses each one as expired.
    const expired = pending.parts.map((part) => {
      const url = new URL(part.url);
      url.searchParams.set("X-Amz-Date", "20200101T000000Z");
      return { ...part, url: String(url) };
    });
    const refused = await fetch(expired[0].url, { method: "PUT", body: bytes.subarray(0, pending.partBytes) });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("Request has expired");

    const uploaded = await new StepwiseClient(stack.url, stack.apiKey).sendUpload({ ...pending, parts: expired }, bytes);
    expect(uploaded).toMatchObject({ fileId: pending.fileId, name: "slow.bin", bytes: bytes.byteLength });
    const { runId } = await main.submit({ input: "Say hello", mode: "react", files: [pending.fileId] });
    expect((await main.waitFor(runId)).status).toBe("succeeded");
    expect(sha256((await download(main, runId, "slow.bin")).bytes)).toBe(sha256(bytes));
  });

  it("re-signing: fresh links for the parts asked; bad requests are 4xx and sign nothing", async () => {
    const pending = (await main.request<PendingUploadView>("POST", "/v1/files", { name: "three.bin", bytes: 16 * 1024 * 1024 * 2 + 1 })).body;
    const resign = (body: unknown, client: Client = main, fileId = pending.fileId) =>
      client.request<UploadLinksView & ErrorBody>("POST", `/v1/files/${fileId}/parts`, body);
    const fresh = await resign({ partNumbers: [3, 2, 3] });
    expect(fresh.status).toBe(200);
    expect(fresh.body.parts.map((p) => p.partNumber)).toEqual([2, 3]);
    expect(Date.parse(fresh.body.expiresAt)).toBeGreaterThan(Date.now());
    expect((await fetch(fresh.body.parts[1].url, { method: "PUT", body: new Uint8Array(1) })).status).toBe(200);

    expect((await resign({ partNumbers: [] })).status).toBe(400);
    expect((await resign({})).status).toBe(400);
    expect((await resign({ partNumbers: [0] })).status).toBe(400);
    expect((await resign({ partNumbers: ["1"] })).status).toBe(400);
    const outside = await resign({ partNumbers: [4] });
    expect(outside.status).toBe(400);
    expect(outside.body.error.code).toBe("unknown_part");
    expect((await resign({ partNumbers: [1] }, other)).status).toBe(404);
    expect((await resign({ partNumbers: [1] }, main, "file_doesnotexist")).status).toBe(404);
    expect((await resign({ partNumbers: [1] }, main, "..")).status).toBe(404);

    const one = (await main.request<PendingUploadView>("POST", "/v1/files", { name: "one.txt", bytes: 2 })).body;
    expect((await fetch(one.parts[0].url, { method: "PUT", headers: one.headers, body: "hi" })).status).toBe(200);
    expect((await main.request("POST", `/v1/files/${one.fileId}/complete`, { parts: [] })).status).toBe(201);
    expect((await resign({ partNumbers: [1] }, main, one.fileId)).status).toBe(409);
  });

  it("a presigned upload exists only once completed with every byte; bad completions are 4xx and change nothing", async () => {
    const announce = (name: string, bytes: number) => main.request<PendingUploadView>("POST", "/v1/files", { name, bytes });
    /** Completed (201, an UploadView) or refused (an ErrorBody): each check reads the one its status says. */
    const complete = (fileId: string, parts: unknown[] = []) =>
      main.request<UploadView & ErrorBody>("POST", `/v1/files/${fileId}/complete`, { parts });

    // One part: a presigned PUT. Before its bytes arrive, it is neither a file nor attachable.
    const small = await announce("notes.txt", 5);
    expect(small.status).toBe(201);
    expect(small.body.parts).toHaveLength(1);
    expect((await main.request<ErrorBody>("POST", "/v1/runs", { input: "hi", files: [small.body.fileId] })).body.error.code).toBe(
      "unknown_file",
    );
    expect((await complete(small.body.fileId)).body.error.code).toBe("upload_incomplete");
    // The link signs the announced length and type: other bytes or another type are refused by
    // storage itself (as S3 answers), and nothing is stored.
    expect(small.body.headers).toEqual({ "content-type": "text/plain" });
    const put = (body: string | Uint8Array, headers: Record<string, string> = small.body.headers) =>
      fetch(small.body.parts[0].url, { method: "PUT", headers, body });
    const longer = await put("hello!");
    expect(longer.status).toBe(403);
    expect(await longer.text()).toContain("SignatureDoesNotMatch");
    expect((await put("hello", { "content-type": "text/html" })).status).toBe(403);
    expect((await complete(small.body.fileId)).body.error.code).toBe("upload_incomplete");
    expect((await put("hello")).status).toBe(200);
    const done = await complete(small.body.fileId);
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ fileId: small.body.fileId, name: "notes.txt", bytes: 5, contentType: "text/plain" });
    expect((await complete(small.body.fileId)).body).toEqual(done.body); // completing again answers the same

    // Multipart: a part missing or with a wrong ETag is refused; another tenant cannot complete it.
    const large = await announce("two-parts.bin", 16 * 1024 * 1024 + 10);
    expect(large.body.parts.map((p: any) => p.partNumber)).toEqual([1, 2]);
    const first = await fetch(large.body.parts[0].url, { method: "PUT", body: new Uint8Array(16 * 1024 * 1024) });
    const etag = first.headers.get("etag")!;
    expect((await complete(large.body.fileId, [{ partNumber: 1, etag }])).status).toBe(400);
    expect(
      (
        await complete(large.body.fileId, [
          { partNumber: 1, etag },
          { partNumber: 2, etag: '"0"' },
        ])
      ).body.error.code,
    ).toBe("upload_incomplete");
    expect((await other.request("POST", `/v1/files/${large.body.fileId}/complete`, { parts: [] })).status).toBe(404);
    expect((await main.request("POST", "/v1/files", { name: "x.bin", bytes: -1 })).status).toBe(400);
    expect((await main.request("POST", "/v1/files", { name: "../..", bytes: 3 })).status).toBe(400);
  });
});

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
