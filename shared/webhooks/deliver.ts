/**
 * One signed webhook POST. Never throws: every failure becomes `{ok: false, error}` for the
 * delivery log and the retry policy. Redirects are not followed (a 3xx is a failure): a redirect
 * could lead past the SSRF guard to an internal address.
 */

import { requestFor } from "../net/httpRequest.js";
import { pinnedLookup, type ResolvedAddress } from "../net/ssrfGuard.js";
import { signWebhook } from "./signing.js";

export const WEBHOOK_USER_AGENT = "Stepwise-Webhooks/1.0";
const RESPONSE_BODY_BYTES = 1024;

export interface DeliverOnceInput {
  url: string;
  /** The message id, the same on every attempt. */
  id: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
  /** The serialized payload, sent and signed byte for byte. */
  body: string;
  secrets: readonly string[];
  timeoutMs: number;
  /** Headers the receiver asked for (an A2A push config's token); the signature's own come last. */
  headers?: Record<string, string>;
  /**
   * The addresses assertDeliverableUrl vetted: connect only to these, with no second DNS lookup
   * that a rebinding attacker could answer differently. Applies to the built-in transport only.
   */
  pinnedAddresses?: readonly ResolvedAddress[];
  /** Send with this fetch instead of node:http(s) (it resolves DNS itself, so it cannot pin). */
  fetchImpl?: typeof fetch;
}

export interface DeliveryResult {
  /** A 2xx answer: the only success. */
  ok: boolean;
  status?: number;
  retryAfter?: string;
  error?: string;
  durationMs: number;
  /** The first KB of the answer, for the delivery log. */
  responseBody?: string;
}

interface Reply {
  status: number;
  header(name: string): string | undefined;
  body: AsyncIterable<Uint8Array> | null;
}

export async function deliverOnce(input: DeliverOnceInput): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsedMs = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(input.timeoutMs);

  let reply: Reply;
  try {
    const url = new URL(input.url);
    const headers = {
      "content-type": "application/json",
      "user-agent": WEBHOOK_USER_AGENT,
      ...input.headers,
      ...signWebhook(input),
    };
    reply = input.fetchImpl
      ? await postWithFetch(input.fetchImpl, url, headers, input.body, signal)
      : await postWithNode(url, headers, input.body, signal, input.pinnedAddresses);
  } catch (error) {
    return { ok: false, error: describeError(error, signal, input.timeoutMs), durationMs: elapsedMs() };
  }

  const responseBody = await readStart(reply.body, RESPONSE_BODY_BYTES);
  const ok = reply.status >= 200 && reply.status < 300;
  const retryAfter = reply.header("retry-after");
  return {
    ok,
    status: reply.status,
    ...(retryAfter ? { retryAfter } : {}),
    ...(ok ? {} : { error: describeStatus(reply) }),
    durationMs: elapsedMs(),
    ...(responseBody ? { responseBody } : {}),
  };
}

async function postWithFetch(
  fetchImpl: typeof fetch,
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<Reply> {
  const response = await fetchImpl(url, { method: "POST", headers, body, redirect: "manual", signal });
  return {
    status: response.status,
    header: (name) => response.headers.get(name) ?? undefined,
    body: response.body,
  };
}

function postWithNode(
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  pinnedAddresses: readonly ResolvedAddress[] | undefined,
): Promise<Reply> {
  const request = requestFor(url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        signal,
        // A fresh connection each time: a pooled socket may have been opened for other addresses.
        agent: false,
        ...(pinnedAddresses ? { lookup: pinnedLookup(pinnedAddresses) } : {}),
      },
      (res) => {
        resolve({
          status: res.statusCode ?? 0,
          header: (name) => {
            const value = res.headers[name];
            return Array.isArray(value) ? value[0] : value;
          },
          body: res,
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The first `limit` bytes of the answer; a broken or slow body only shortens the log. */
async function readStart(body: AsyncIterable<Uint8Array> | null, limit: number): Promise<string | undefined> {
  if (!body) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size >= limit) break;
    }
  } catch {
    // keep what arrived
  }
  return Buffer.concat(chunks).subarray(0, limit).toString("utf8");
}

function describeStatus(reply: Reply): string {
  if (reply.status >= 300 && reply.status < 400) {
    const location = reply.header("location");
    return `redirect (HTTP ${reply.status}${location ? ` to ${location}` : ""}) not followed: set the webhook URL to the final address`;
  }
  return `HTTP ${reply.status}`;
}

function describeError(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `timed out after ${timeoutMs} ms`;
  // fetch says only "fetch failed" and puts the reason (ECONNREFUSED, ...) in the cause.
  const messages: string[] = [];
  for (let e = error; e instanceof Error && messages.length < 3; e = e.cause) messages.push(e.message);
  return messages.join(": ") || String(error);
}
