import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isValidWebhookSecret, newWebhookSecret, signWebhook, verifyWebhook } from "../../../../shared/webhooks/signing.js";

/**
 * A receiver written from the Standard Webhooks specification alone, with WebCrypto rather than
 * node:crypto and nothing imported from our module: the key is the base64-decoded part after
 * `whsec_`, the signed content `${id}.${timestamp}.${body}`, and any `v1,<base64>` entry may match.
 */
async function referenceVerify(secret: string, headers: Record<string, string>, body: string): Promise<boolean> {
  const keyBytes = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const content = new TextEncoder().encode(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, content));
  const expected = btoa(String.fromCharCode(...mac));
  return (headers["webhook-signature"] ?? "").split(" ").some((entry) => entry.startsWith("v1,") && entry.slice(3) === expected);
}

// The specification's published test vector.
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

const NOW = 1_700_000_000;

describe("newWebhookSecret", () => {
  it("is whsec_ followed by base64 of 32 random bytes", () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
    expect(isValidWebhookSecret(secret)).toBe(true);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it.each([
    ["no prefix", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    ["not base64", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa!!"],
    ["shorter than 24 bytes", `whsec_${Buffer.alloc(16, 1).toString("base64")}`],
    ["longer than 64 bytes", `whsec_${Buffer.alloc(65, 1).toString("base64")}`],
    ["empty", "whsec_"],
  ])("rejects a secret with %s", (_, secret) => {
    expect(isValidWebhookSecret(secret)).toBe(false);
    expect(() => signWebhook({ id: "msg_1", timestamp: NOW, body: "{}", secrets: [secret] })).toThrow(/whsec_/);
  });
});

describe("signWebhook", () => {
  it("reproduces the specification's test vector", async () => {
    const headers = signWebhook({ id: VECTOR.id, timestamp: VECTOR.timestamp, body: VECTOR.body, secrets: [VECTOR.secret] });
    expect(headers).toEqual({
      "webhook-id": VECTOR.id,
      "webhook-timestamp": String(VECTOR.timestamp),
      "webhook-signature": VECTOR.signature,
    });
    expect(await referenceVerify(VECTOR.secret, headers, VECTOR.body)).toBe(true);
    expect(() => verifyWebhook({ headers, body: VECTOR.body, secrets: [VECTOR.secret], nowSeconds: VECTOR.timestamp })).not.toThrow();
  });

  it("produces headers an independent receiver accepts, for any id, body and secret", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
        fc.integer({ min: 0, max: 4_000_000_000 }),
        fc.string({ unit: "binary", maxLength: 300 }),
        fc.uint8Array({ minLength: 24, maxLength: 64 }),
        async (id, timestamp, body, keyBytes) => {
          const secret = `whsec_${Buffer.from(keyBytes).toString("base64")}`;
          const headers = signWebhook({ id, timestamp, body, secrets: [secret] });
          expect(await referenceVerify(secret, headers, body)).toBe(true);
          verifyWebhook({ headers, body, secrets: [secret], nowSeconds: timestamp });
        },
      ),
      { numRuns: 100 },
    );
  });

  it("signs once per secret during rotation, and each receiver's secret verifies alone", async () => {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
    const body = JSON.stringify({ type: "run.succeeded", data: { runId: "r1" } });
    const headers = signWebhook({ id: "msg_rotate", timestamp: NOW, body, secrets: [newSecret, oldSecret] });

    const entries = headers["webhook-signature"].split(" ");
    expect(entries).toHaveLength(2);
    expect(entries.every((e) => /^v1,[A-Za-z0-9+/]{43}=$/.test(e))).toBe(true);
    for (const secret of [oldSecret, newSecret]) {
      expect(await referenceVerify(secret, headers, body)).toBe(true);
      expect(() => verifyWebhook({ headers, body, secrets: [secret], nowSeconds: NOW })).not.toThrow();
    }
    expect(await referenceVerify(newWebhookSecret(), headers, body)).toBe(false);
    expect(() => verifyWebhook({ headers, body, secrets: [newWebhookSecret()], nowSeconds: NOW })).toThrow(/no webhook-signature matches/);
  });

  it.each([
    ["empty", ""],
    ["containing '.'", "msg.1"],
    ["containing a space", "msg 1"],
  ])("refuses an id %s (it would make the signed content ambiguous)", (_, id) => {
    expect(() => signWebhook({ id, timestamp: NOW, body: "{}", secrets: [VECTOR.secret] })).toThrow(TypeError);
  });

  it("refuses a timestamp in milliseconds or with a fraction, and an empty secret list", () => {
    expect(() => signWebhook({ id: "m", timestamp: 1.5, body: "{}", secrets: [VECTOR.secret] })).toThrow(/unix seconds/);
    expect(() => signWebhook({ id: "m", timestamp: -1, body: "{}", secrets: [VECTOR.secret] })).toThrow(/unix seconds/);
    expect(() => signWebhook({ id: "m", timestamp: NOW, body: "{}", secrets: [] })).toThrow(/at least one/);
  });
});

describe("verifyWebhook", () => {
  const secret = VECTOR.secret;
  const body = '{"type":"run.failed"}';
  const headers = signWebhook({ id: "msg_tamper", timestamp: NOW, body, secrets: [secret] });
  const signature = headers["webhook-signature"];
  const flippedSignature = `${signature.slice(0, -2)}${signature.at(-2) === "A" ? "B" : "A"}=`;

  it.each([
    ["body", { ...headers }, `${body} `],
    ["timestamp", { ...headers, "webhook-timestamp": String(NOW + 1) }, body],
    ["id", { ...headers, "webhook-id": "msg_other" }, body],
    ["signature", { ...headers, "webhook-signature": flippedSignature }, body],
  ])("rejects a tampered %s, as the independent receiver does", async (_, tampered, tamperedBody) => {
    expect(() => verifyWebhook({ headers: tampered, body: tamperedBody, secrets: [secret], nowSeconds: NOW })).toThrow(
      /no webhook-signature matches/,
    );
    expect(await referenceVerify(secret, tampered, tamperedBody)).toBe(false);
  });

  it("rejects timestamps beyond the tolerance, old or future (replay protection)", () => {
    const verifyAt = (nowSeconds: number, toleranceSeconds?: number) => () =>
      verifyWebhook({ headers, body, secrets: [secret], nowSeconds, ...(toleranceSeconds ? { toleranceSeconds } : {}) });
    expect(verifyAt(NOW + 300)).not.toThrow();
    expect(verifyAt(NOW - 300)).not.toThrow();
    expect(verifyAt(NOW + 301)).toThrow(/too old/);
    expect(verifyAt(NOW - 301)).toThrow(/future/);
    expect(verifyAt(NOW + 3600, 7200)).not.toThrow();
    expect(() => verifyWebhook({ headers, body, secrets: [secret] })).toThrow(/too old/); // real clock: 2023 is long gone
  });

  it("rejects missing headers and a non-numeric timestamp", () => {
    expect(() => verifyWebhook({ headers: { "webhook-id": "m" }, body, secrets: [secret], nowSeconds: NOW })).toThrow(/missing/);
    expect(() =>
      verifyWebhook({ headers: { ...headers, "webhook-timestamp": "2023-11-14T22:13:20Z" }, body, secrets: [secret], nowSeconds: NOW }),
    ).toThrow(/unix seconds/);
  });

  it("accepts Headers, any header case, raw bytes, and ignores other signature schemes", () => {
    const mixed = {
      "Webhook-Id": headers["webhook-id"],
      "WEBHOOK-TIMESTAMP": headers["webhook-timestamp"],
      "webhook-signature": `v1a,c29tZXRoaW5nIGVsc2U= ${headers["webhook-signature"]}`,
    };
    expect(() => verifyWebhook({ headers: mixed, body: Buffer.from(body), secrets: [secret], nowSeconds: NOW })).not.toThrow();
    expect(() => verifyWebhook({ headers: new Headers(headers), body, secrets: [secret], nowSeconds: NOW })).not.toThrow();
  });
});
