import { request as httpRequest } from "node:http";
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Route, routes } from "../../functions/api/routes.js";
import { Behind } from "../support/aws.js";
import { Client, type ErrorBody } from "../support/client.js";
import { arbitraryFor, bodySchema, HOSTILE_STRINGS, paramNames, pathFor } from "../support/fuzz.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { untilQuiet } from "../support/quietTable.js";

/**
 * Hostile requests to EVERY route of the API's router table (routes added later are fuzzed
 * without touching this file), bodies generated from each route's zod contract: never a 5xx, an
 * error body on every 4xx, and a rejected request changes nothing in the table.
 */

let stack: RunningStack;
let client: Client;
let behind: Behind;
/** Runs that have ended and whose writes in the background have landed. */
const settled = new Set<string>();
/** Ids that exist, so generated requests also reach the code behind the lookups. */
const real: Record<string, string> = {};

beforeAll(async () => {
  stack = await startStack({}, ["other"]);
  client = new Client(stack.url, stack.apiKey);
  behind = new Behind(stack.endpoints!);
  const { runId, sessionId } = await client.submit({ input: "What is 2+2?", mode: "react" });
  await client.waitForEnd(runId);
  // The notifier's writes after the end (the state-transition count last) must land before the first snapshot.
  await behind.untilEndHandled(runId);
  Object.assign(real, { runId, sessionId });
});

afterAll(async () => {
  behind?.destroy();
  await stack?.stop();
});

/**
 * The table as last scanned while nothing was writing to it, if nothing has been sent since: the
 * next request's "before". A rejected request's "after" equals its "before", and until the next
 * request nothing writes (every run this file started has ended and its writes have landed), so
 * one scan a request is enough; a write in between would still show, as a change.
 */
let quiet: string | undefined;

/** The whole table, in key order: what "changes nothing" is checked against. */
async function snapshot(): Promise<string> {
  const items: unknown[] = [];
  let start: Record<string, any> | undefined;
  do {
    const page = await behind.dynamo.send(
      new ScanCommand({ TableName: stack.endpoints!.tableName, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return JSON.stringify(items.map((i) => JSON.stringify(i)).sort());
}

const ENDED = ["succeeded", "failed", "cancelled", "timed_out"];

/**
 * Waits until no run is in flight (a fuzzed request may have started a valid one) and the table has
 * stopped changing: a run's end is followed by writes in the background (its notification, its
 * deliveries), which must not land inside the next request's before-and-after.
 */
async function settle(): Promise<void> {
  let started = false;
  for (const runId of await behind.runIds()) {
    if (settled.has(runId)) continue;
    started = true;
    const run = await client.run(runId).catch(() => undefined);
    const ended = run && ENDED.includes(run.status) ? run : (await client.waitForEnd(runId, 60_000).catch(() => undefined))?.run;
    if (ended && ENDED.includes(ended.status)) await behind.untilEndHandled(runId);
    settled.add(runId);
  }
  // Only a request that started a run leaves writes behind it.
  if (started) quiet = await untilQuiet(snapshot);
}

interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Sends exactly these bytes (fetch would normalise the path and refuse some headers). */
function send(req: RawRequest): Promise<{ status: number; body: string }> {
  const url = new URL(stack.url);
  return new Promise((resolve, reject) => {
    // Content-Length always: Node sends a GET's or DELETE's body without framing otherwise.
    const headers = req.body === undefined ? req.headers : { ...req.headers, "content-length": String(Buffer.byteLength(req.body)) };
    const r = httpRequest({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
    });
    r.on("error", reject);
    r.end(req.body);
  });
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Percent-encoded as a client would; a lone surrogate (not encodable) goes as its raw UTF-8 bytes' escapes. */
const encode = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return "%ED%A0%80";
  }
};

function requestsFor(route: Route): fc.Arbitrary<RawRequest> {
  const names = paramNames(route);
  const param = (name: string) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(real[name] ?? "x") },
      { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 80 }).map(encode) },
      { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map((s) => (s ? encode(s) : s)) },
      { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 3_000 }).map((n) => "z".repeat(n)) },
    );
  const schema = bodySchema(route);
  const body = fc.oneof(
    {
      weight: schema ? 5 : 1,
      arbitrary: (schema ? arbitraryFor(schema) : fc.jsonValue({ maxDepth: 3 })).map((v) => JSON.stringify(v) ?? ""),
    },
    { weight: 1, arbitrary: fc.constantFrom("", "{", "[1,", "null", "\u0000", '{"input":', "x".repeat(300_000)) },
  );
  const auth = fc.constantFrom("main", "main", "main", "other", "none", "garbage");
  return fc
    .record({
      values: fc.record(Object.fromEntries(names.map((n) => [n, param(n)]))),
      method: fc.oneof({ weight: 6, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
      body: fc.option(body, { freq: 4 }),
      contentType: fc.constantFrom("application/json", "application/json", "text/plain", ""),
      auth,
      query: fc.option(
        fc.dictionary(
          fc.constantFrom("after", "limit", "x", "cursor"),
          fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), fc.integer().map(String)),
        ),
        { freq: 3 },
      ),
      idempotencyKey: fc.option(fc.oneof(fc.string({ maxLength: 300 }), fc.constantFrom(...HOSTILE_STRINGS)), { freq: 4 }),
    })
    .map(({ values, method, body, contentType, auth, query, idempotencyKey }) => {
      const headers: Record<string, string> = {};
      const key = auth === "main" ? stack.apiKey : auth === "other" ? stack.keys.other : auth === "garbage" ? "nope" : undefined;
      if (key) headers.authorization = `Bearer ${key}`;
      if (contentType && body !== null) headers["content-type"] = contentType;
      // Header values must be ISO-8859-1 without control characters to be sendable at all.
      if (idempotencyKey !== null && /^[\x20-\x7e]*$/.test(idempotencyKey)) headers["idempotency-key"] = idempotencyKey;
      const search = query ? `?${new URLSearchParams(query)}` : "";
      return { method, path: `${pathFor(route, values)}${search}`, headers, body: body ?? undefined };
    });
}

async function expectRejectedChangesNothing(req: RawRequest): Promise<void> {
  const before = quiet ?? (await snapshot());
  // Whatever this request does, the table is not known to be quiet until it is scanned again.
  quiet = undefined;
  const res = await send(req);
  expect(res.status, `${req.method} ${req.path.slice(0, 200)} → ${res.body.slice(0, 300)}`).toBeLessThan(500);
  if (res.status >= 400) {
    // MCP's and A2A's own refusals are JSON-RPC errors (a numeric code), as their clients expect.
    const code = JSON.parse(res.body).error.code;
    expect(code, "an error body names the error").toEqual(
      /^\/(mcp|a2a)\b/.test(req.path) && typeof code === "number" ? expect.any(Number) : expect.any(String),
    );
    const after = await snapshot();
    expect(after, `${req.method} ${req.path.slice(0, 200)} was rejected (${res.status}) but changed the table`).toBe(before);
    quiet = after;
  } else if (req.method !== "GET") {
    await settle();
  }
}

describe("fuzzing every route from the router table and the zod contracts", () => {
  it("covers every route", () => {
    expect(routes.length).toBeGreaterThanOrEqual(12);
    for (const route of routes) expect(pathFor(route, Object.fromEntries(paramNames(route).map((n) => [n, "abc"])))).toMatch(route.pattern);
  });

  // A public route (health, documents, the console's files) reads no key, path value, query or
  // body: what its requests can vary is the method (each one tried) and the headers.
  it.each(routes.map((route) => [`${route.method} ${route.pattern.source}`, route] as const))(
    "%s: no 5xx, and a rejected request changes nothing",
    async (_, route) => {
      await fc.assert(fc.asyncProperty(requestsFor(route), expectRejectedChangesNothing), {
        numRuns: route.public ? 10 : 30,
        examples: route.public
          ? METHODS.map((method): [RawRequest] => [{ method, path: pathFor(route, {}), headers: {}, body: "{}" }])
          : [],
        endOnFailure: true,
      });
    },
  );

  it("paths the router has no route for, malformed or huge, are 4xx", async () => {
    const paths = [
      "//",
      "///",
      "/v1//runs",
      "/%",
      "/%zz",
      "/v1/runs/%00",
      `/v1/runs/${"a".repeat(1_100)}/interrupts/${"b".repeat(1_100)}`,
      `/${"x".repeat(8_000)}`,
      "/v1/runs/../runs",
      "/v1/runs?after=-1",
    ];
    for (const path of paths) {
      for (const method of ["GET", "POST", "DELETE"]) {
        await expectRejectedChangesNothing({
          method,
          path,
          headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json" },
          body: method === "POST" ? "{}" : undefined,
        });
      }
    }
  });

  it("an interrupt or delivery id over 1 KB is a 400 naming the parameter, not a storage error", async () => {
    for (const path of [
      `/v1/runs/${real.runId}/interrupts/${"i".repeat(1_100)}`,
      `/v1/runs/${real.runId}/webhooks/${"d".repeat(1_100)}/redeliver`,
    ]) {
      const res = await client.request<ErrorBody>("POST", path, { decision: "approve" });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/path\.(interruptId|deliveryId)/);
    }
  });
});
