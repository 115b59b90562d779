import { describe, expect, it } from "vitest";
import { parseUpload } from "../../../../functions/api/upload.js";
import type { HttpEvent } from "../../../../functions/http.js";

/** The upload parser behind POST /v1/files, with a configured limit. */
const event = (body: Buffer, contentType: string, name?: string) =>
  ({
    body: body.toString("base64"),
    isBase64Encoded: true,
    headers: { "content-type": contentType },
    queryStringParameters: name ? { name } : undefined,
  }) as unknown as HttpEvent;

async function multipart(fileName: string, bytes: number) {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(bytes)], { type: "application/octet-stream" }), fileName);
  const request = new Request("http://x/", { method: "POST", body: form });
  return event(Buffer.from(await request.arrayBuffer()), request.headers.get("content-type")!);
}

describe("parseUpload", () => {
  it.each([
    ["raw", async (n: number) => event(Buffer.alloc(n), "application/octet-stream", "data.bin")],
    ["multipart", (n: number) => multipart("data.bin", n)],
  ])("%s: takes a file at the limit, refuses one byte more with 413", async (_kind, make) => {
    const atLimit = await parseUpload(await make(1000), 1000);
    expect(atLimit).toMatchObject({ name: "data.bin", contentType: "application/octet-stream" });
    expect(atLimit.body.byteLength).toBe(1000);
    await expect(parseUpload(await make(1001), 1000)).rejects.toMatchObject({ statusCode: 413, code: "payload_too_large" });
  });

  it("a body cut off inside the file part → 400 invalid_multipart (the file stream's error is heard)", async () => {
    const whole = await multipart("data.bin", 5000);
    const cut = Buffer.from(whole.body!, "base64").subarray(0, 3000);
    await expect(parseUpload(event(cut, whole.headers["content-type"]!), 10_000)).rejects.toMatchObject({
      statusCode: 400,
      code: "invalid_multipart",
    });
  });

  it("keeps the client's content type, or takes it from the name", async () => {
    expect((await parseUpload(event(Buffer.from("a,b"), "text/csv; charset=utf-8", "x.csv"), 100)).contentType).toBe("text/csv");
    expect((await parseUpload(event(Buffer.from("{}"), "application/octet-stream", "x.json"), 100)).contentType).toBe("application/json");
  });
});
