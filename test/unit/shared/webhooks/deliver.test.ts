import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildWebhookPayload, MAX_RESULT_CHARS, WebhookPayload } from "../../../../shared/contracts/webhook.js";
import { type DeliverOnceInput, deliverOnce, WEBHOOK_USER_AGENT } from "../../../../shared/webhooks/deliver.js";
import { newWebhookSecret, verifyWebhook } from "../../../../shared/webhooks/signing.js";

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1 whose path picks the answer. */
const received: Received[] = [];
const server = http.createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk: string) => (body += chunk));
  req.on("end", () => {
    received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    switch (req.url) {
      case "/ok":
        return void res.writeHead(200, { "content-type": "text/plain" }).end("thanks");
      case "/accepted":
        return void res.writeHead(204).end();
      case "/boom":
        return void res.writeHead(500).end("internal error");
      case "/busy":
        return void res.writeHead(429, { "retry-after": "120" }).end("slow down");
      case "/gone":
        return void res.writeHead(410).end();
      case "/redirect":
        return void res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end("moved");
      case "/large":
        return void res.writeHead(500).end("é".repeat(2000));
      case "/slow":
        return; // never answers; the client's timeout ends it
      case "/slow-body":
        res.writeHead(200);
        return void res.write("started");
      default:
        return void res.writeHead(404).end();
    }
  });
});
let origin = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  received.length = 0;
});

const secret = newWebhookSecret();
const message = (path: string, extra: Partial<DeliverOnceInput> = {}): DeliverOnceInput => ({
  url: `${origin}${path}`,
  id: "msg_01JTESTDELIVERY",
  timestamp: Math.floor(Date.now() / 1000),
  body: JSON.stringify({ type: "run.succeeded", timestamp: "2025-01-01T00:00:00.000Z", data: { runId: "run_1" } }),
  secrets: [secret],
  timeoutMs: 2000,
  ...extra,
});

/** A port nobody listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe.each([
  ["node:http", undefined],
  ["fetch", fetch],
])("deliverOnce over %s", (_, fetchImpl) => {
  const over = (input: DeliverOnceInput) => deliverOnce(fetchImpl ? { ...input, fetchImpl } : input);
  const send = (path: string, extra: Partial<DeliverOnceInput> = {}) => over(message(path, extra));

  it("POSTs the JSON body with Standard Webhooks headers that verify", async () => {
    const input = message("/ok");
    const result = await over(input);
    expect(result).toMatchObject({ ok: true, status: 200, responseBody: "thanks" });
    expect(result.error).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(0);

    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request!.method).toBe("POST");
    expect(request!.body).toBe(input.body);
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["user-agent"]).toBe(WEBHOOK_USER_AGENT);
    expect(request!.headers["webhook-id"]).toBe(input.id);
    expect(request!.headers["webhook-timestamp"]).toMatch(/^\d+$/);
    verifyWebhook({ headers: request!.headers, body: request!.body, secrets: [secret] });

    // And by hand, straight from the specification.
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    const content = `${request!.headers["webhook-id"]}.${request!.headers["webhook-timestamp"]}.${request!.body}`;
    expect(request!.headers["webhook-signature"]).toBe(`v1,${createHmac("sha256", key).update(content).digest("base64")}`);
  });

  it("counts any 2xx as success", async () => {
    expect(await send("/accepted")).toMatchObject({ ok: true, status: 204 });
  });

  it("reports a 500 as a failure with its status and the start of the answer", async () => {
    expect(await send("/boom")).toMatchObject({ ok: false, status: 500, error: "HTTP 500", responseBody: "internal error" });
  });

  it("passes on Retry-After and 410 for the retry policy", async () => {
    expect(await send("/busy")).toMatchObject({ ok: false, status: 429, retryAfter: "120" });
    expect(await send("/gone")).toMatchObject({ ok: false, status: 410 });
  });

  it("keeps only the first KB of the answer", async () => {
    const { responseBody } = await send("/large");
    expect(Buffer.byteLength(responseBody!)).toBeLessThanOrEqual(1024);
    expect(responseBody).toMatch(/^é{500}/);
  });

  it("does not follow a redirect: a 3xx is a failure", async () => {
    const result = await send("/redirect");
    expect(result).toMatchObject({ ok: false, status: 302 });
    expect(result.error).toMatch(/redirect.*169\.254\.169\.254.*not followed/);
    expect(received.map((r) => r.url)).toEqual(["/redirect"]);
  });

  it("turns a timeout into a failure, without throwing", async () => {
    const result = await send("/slow", { timeoutMs: 150 });
    expect(result).toEqual({ ok: false, error: "timed out after 150 ms", durationMs: expect.any(Number) });
    expect(result.durationMs).toBeGreaterThanOrEqual(140);
    expect(result.durationMs).toBeLessThan(2000);
  });

  it("keeps a 2xx whose body never ends: the receiver has accepted", async () => {
    const result = await send("/slow-body", { timeoutMs: 150 });
    expect(result).toMatchObject({ ok: true, status: 200, responseBody: "started" });
  });

  it("turns a refused connection into a failure, without throwing", async () => {
    const port = await closedPort();
    const result = await send("/ok", { url: `http://127.0.0.1:${port}/ok` });
    expect(result.ok).toBe(false);
    expect(result.status).toBeUndefined();
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it("turns a bad URL or a bad secret into a failure, without throwing", async () => {
    expect(await send("/ok", { url: "not a url" })).toMatchObject({ ok: false, error: expect.stringMatching(/Invalid URL/) });
    expect(await send("/ok", { secrets: ["not-a-secret"] })).toMatchObject({ ok: false, error: expect.stringMatching(/whsec_/) });
    expect(received).toHaveLength(0);
  });
});

describe("deliverOnce with pinned addresses", () => {
  it("connects to the vetted address without resolving the host again", async () => {
    const port = new URL(origin).port;
    // `.invalid` never resolves (RFC 2606): only the pinned address can make this work.
    const pinned = await deliverOnce(
      message("/ok", { url: `http://hooks.invalid:${port}/ok`, pinnedAddresses: [{ address: "127.0.0.1", family: 4 }] }),
    );
    expect(pinned).toMatchObject({ ok: true, status: 200 });
    expect(received[0]!.headers.host).toBe(`hooks.invalid:${port}`);

    const unpinned = await deliverOnce(message("/ok", { url: `http://hooks.invalid:${port}/ok` }));
    expect(unpinned).toMatchObject({ ok: false, error: expect.stringMatching(/ENOTFOUND/) });
  });

  it("fails when no vetted address fits", async () => {
    const result = await deliverOnce(message("/ok", { url: "http://hooks.invalid:1/ok", pinnedAddresses: [] }));
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/no vetted address/) });
  });
});

describe("webhook payload", () => {
  const links = {
    self: "https://api.example.com/v1/runs/run_1",
    events: "https://api.example.com/v1/runs/run_1/events",
    stream: "https://s.example.com/v1/runs/run_1/stream",
  };

  it("is delivered as a {type, timestamp, data} envelope the receiver can parse", async () => {
    const payload = buildWebhookPayload({
      runId: "run_1",
      status: "succeeded",
      sessionId: "ses_1",
      result: "The answer is 42.",
      links: { ...links, console: "https://console.aws.amazon.com/x" } as typeof links,
      metadata: { customer: "acme" },
      occurredAt: "2025-01-01T00:00:00.000Z",
    });
    const result = await deliverOnce(message("/ok", { body: JSON.stringify(payload) }));
    expect(result.ok).toBe(true);
    const parsed = WebhookPayload.parse(JSON.parse(received[0]!.body));
    expect(parsed).toEqual({
      type: "run.succeeded",
      timestamp: "2025-01-01T00:00:00.000Z",
      data: { runId: "run_1", status: "succeeded", sessionId: "ses_1", result: "The answer is 42.", links, metadata: { customer: "acme" } },
    });
  });

  it.each([
    ["failed", "run.failed"],
    ["cancelled", "run.cancelled"],
    ["timed_out", "run.timed_out"],
    ["awaiting_input", "run.awaiting_input"],
  ] as const)("names a %s run %s", (status, type) => {
    expect(buildWebhookPayload({ runId: "r", status, sessionId: "s", links, metadata: {} }).type).toBe(type);
  });

  it("stays small: a long result is cut, flagged, and left whole behind links.self", () => {
    const payload = buildWebhookPayload({
      runId: "run_1",
      status: "failed",
      sessionId: "ses_1",
      result: `${"x".repeat(MAX_RESULT_CHARS - 1)}😀 and much more ${"y".repeat(100_000)}`,
      error: { code: "agent_error", message: "m".repeat(50_000) },
      interrupts: [{ interruptId: "int_1", kind: "ask_user", summary: "q".repeat(5000) }],
      links,
      metadata: {},
    });
    expect(WebhookPayload.safeParse(payload).success).toBe(true);
    expect(payload.data.result).toBe("x".repeat(MAX_RESULT_CHARS - 1)); // the emoji's surrogate pair is not split
    expect(payload.data.resultTruncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(payload))).toBeLessThan(8 * 1024);
    expect(
      buildWebhookPayload({ runId: "r", status: "succeeded", sessionId: "s", result: "short", links, metadata: {} }).data,
    ).not.toHaveProperty("resultTruncated");
  });
});
