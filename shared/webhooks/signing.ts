/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, symmetric scheme `v1`):
 * `webhook-signature` lists `v1,<base64 HMAC-SHA256(key, "${id}.${timestamp}.${body}")>`, one per
 * active secret, and the key is the base64-decoded part of a `whsec_<base64>` secret.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const SECRET_PREFIX = "whsec_";
// The specification asks for at least 24 random bytes; 64 bytes (512 bits) is the HMAC-SHA256 block.
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
const NEW_KEY_BYTES = 32;
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

export type WebhookHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

export interface SignWebhookInput {
  /** Stable across retries of one message: receivers use it as an idempotency key. */
  id: string;
  /** Unix seconds of this attempt (a retry is signed again with a fresh timestamp). */
  timestamp: number;
  /** The exact body sent: sign the serialized string, never re-serialize after signing. */
  body: string;
  /** Active secrets; two during rotation, so receivers holding either one can verify. */
  secrets: readonly string[];
}

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(NEW_KEY_BYTES).toString("base64");
}

export function isValidWebhookSecret(secret: string): boolean {
  return decodeSecret(secret) !== undefined;
}

export function signWebhook({ id, timestamp, body, secrets }: SignWebhookInput): WebhookHeaders {
  // A '.' in the id would make "id.timestamp.body" ambiguous (the specification forbids it).
  if (!/^[^\s.]+$/.test(id)) throw new TypeError("webhook id must be non-empty, without '.' or whitespace");
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new TypeError("webhook timestamp must be whole unix seconds");
  if (secrets.length === 0) throw new TypeError("at least one webhook secret is needed to sign");
  const signatures = secrets.map((secret) => `v1,${hmac(keyOf(secret), id, String(timestamp), body)}`);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
}

export interface VerifyWebhookInput {
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The raw body as received. */
  body: string | Uint8Array;
  secrets: readonly string[];
  toleranceSeconds?: number;
  nowSeconds?: number;
}

/**
 * What a receiver does: check the timestamp is within tolerance (replay protection), then accept
 * if any `v1` signature matches any secret. Throws WebhookVerificationError otherwise.
 */
export function verifyWebhook({
  headers,
  body,
  secrets,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  nowSeconds = Math.floor(Date.now() / 1000),
}: VerifyWebhookInput): void {
  const id = headerOf(headers, "webhook-id");
  const timestamp = headerOf(headers, "webhook-timestamp");
  const signatureHeader = headerOf(headers, "webhook-signature");
  if (!id || !timestamp || !signatureHeader)
    throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature header");
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not unix seconds");
  const skew = nowSeconds - Number(timestamp);
  if (skew > toleranceSeconds) throw new WebhookVerificationError("webhook-timestamp is too old");
  if (skew < -toleranceSeconds) throw new WebhookVerificationError("webhook-timestamp is too far in the future");

  const expected = secrets.map((secret) => Buffer.from(hmac(keyOf(secret), id, timestamp, body)));
  const offered = signatureHeader
    .split(" ")
    .filter((entry) => entry.startsWith("v1,"))
    .map((entry) => Buffer.from(entry.slice(3)));
  const matches = offered.some((candidate) =>
    expected.some((wanted) => wanted.length === candidate.length && timingSafeEqual(wanted, candidate)),
  );
  if (!matches) throw new WebhookVerificationError("no webhook-signature matches");
}

function hmac(key: Buffer, id: string, timestamp: string, body: string | Uint8Array): string {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest("base64");
}

function keyOf(secret: string): Buffer {
  const key = decodeSecret(secret);
  if (!key) throw new TypeError(`a webhook secret is '${SECRET_PREFIX}' followed by base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`);
  return key;
}

function decodeSecret(secret: string): Buffer | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return undefined;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return undefined;
  const key = Buffer.from(encoded, "base64");
  // Buffer.from silently drops what it cannot decode: a round trip catches a truncated secret.
  if (key.toString("base64").replace(/=+$/, "") !== encoded.replace(/=+$/, "")) return undefined;
  return key.length >= MIN_KEY_BYTES && key.length <= MAX_KEY_BYTES ? key : undefined;
}

function headerOf(headers: VerifyWebhookInput["headers"], name: string): string | undefined {
  if (typeof headers.get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}
