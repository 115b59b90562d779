import { createHash } from "node:crypto";
import { DynamoDBClient, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../functions/api/openapi.js";
import { routes } from "../../functions/api/routes.js";
import { CreateRunRequest } from "../../shared/contracts/api.js";
import { type CreateRunResponse, RunList, type RunView, SessionList, SessionView, StreamToken } from "../../shared/contracts/responses.js";
import { Client, type ErrorBody } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/** The parts of the OpenAPI document the checks below read (the validator checks all of it). */
type OpenApiDocument = { openapi: string; paths: Record<string, Record<string, any>> };

/** The API the console, the CLI and other clients build on: listings, stream tokens, OpenAPI, CORS. */
describe("client API", () => {
  let stack: RunningStack;
  let client: Client;
  let other: Client;

  beforeAll(async () => {
    // Session titles on (the test stacks' default is off): this file counts no model calls.
    stack = await startStack({ CORS_ALLOWED_ORIGINS: "https://app.example.com", STEPWISE_SESSION_TITLES: "true" });
    client = new Client(stack.url, stack.apiKey);
    other = new Client(stack.url, stack.keys.other!);
  });
  afterAll(() => stack?.stop());

  const submit = async (input: string, extra: Record<string, unknown> = {}) => {
    const res = await client.request<CreateRunResponse>("POST", "/v1/runs", { input, mode: "react", ...extra });
    expect(res.status).toBe(202);
    return res.body.runId;
  };
  const allPages = async (query: string, limit: number) => {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await client.request("GET", `/v1/runs?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      const page = RunList.parse(res.body);
      expect(page.runs.length).toBeLessThanOrEqual(limit);
      ids.push(...page.runs.map((r) => r.runId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 50);
    return ids;
  };

  it("lists runs newest first across pages, with no duplicate or gap while runs are being created", async () => {
    const before: string[] = [];
    for (let i = 0; i < 7; i++) before.push(await submit(`Hello number ${i}`));
    // Page through while more runs arrive: they are newer than the first page, so no page shifts.
    const [listed, during] = await Promise.all([allPages("", 2), Promise.all([1, 2, 3].map((i) => submit(`Late run ${i}`)))]);
    expect(new Set(listed).size).toBe(listed.length);
    const ours = listed.filter((id) => before.includes(id));
    expect(ours).toEqual([...before].reverse());
    // Runs created while paging appear only before the ones that existed, never in between.
    const firstOld = listed.indexOf(before.at(-1)!);
    expect(listed.slice(firstOld).some((id) => during.includes(id))).toBe(false);
    // A fresh listing has all ten, newest first.
    const again = await allPages("", 4);
    expect(again.slice(0, 10).sort()).toEqual([...before, ...during].sort());
    expect(again.indexOf(before[0]!)).toBeGreaterThan(again.indexOf(before[6]!));
  });

  it("filters by session and status, lists sessions, and shows a tenant only its own", async () => {
    const sessionId = `ses_list_${Date.now()}`;
    const a = await submit("Hello from a session", { sessionId });
    // Sent while the first is in flight: it waits its turn (the default, reject, would refuse it).
    const b = await submit("Hello again", { sessionId, multitask: "enqueue" });
    expect(await allPages(`&sessionId=${sessionId}`, 1)).toEqual([b, a]);
    const sessions = SessionList.parse((await client.request("GET", "/v1/sessions?limit=100")).body);
    expect(sessions.sessions.filter((s) => s.sessionId === sessionId)).toEqual([expect.objectContaining({ sessionId, lastRunId: b })]);

    // Every run is found under its status, and only there.
    await expect
      .poll(async () => (await client.request<RunView>("GET", `/v1/runs/${a}`)).body.status, { timeout: 60_000 })
      .toBe("succeeded");
    const succeeded = await allPages("&status=succeeded", 3);
    expect(succeeded).toContain(a);
    expect(await allPages("&status=queued", 3)).not.toContain(a);

    expect(RunList.parse((await other.request("GET", "/v1/runs")).body).runs).toEqual([]);
    expect(SessionList.parse((await other.request("GET", "/v1/sessions")).body).sessions).toEqual([]);
    expect((await other.request<RunList>("GET", `/v1/runs?sessionId=${sessionId}`)).body.runs).toEqual([]);
  });

  it("titles a session after its first answered turn: the session's view, the sessions list and the run that answered show it; a later turn keeps it", async () => {
    const sessionId = `ses_title_${Date.now()}`;
    const session = async () => SessionView.parse((await client.request("GET", `/v1/sessions/${sessionId}`)).body);
    const first = await submit("Compare the sales of each region, then chart them. Keep it short.", { sessionId });
    // The offline model titles from the request: its first sentence, at most six words.
    const title = "Compare the sales of each region";
    await expect.poll(async () => (await session()).title, { timeout: 60_000 }).toBe(title);
    expect((await client.request<RunView>("GET", `/v1/runs/${first}`)).body.status).toBe("succeeded");
    const listed = SessionList.parse((await client.request("GET", "/v1/sessions?limit=100")).body).sessions;
    expect(listed.find((s) => s.sessionId === sessionId)).toMatchObject({ sessionId, title, lastRunId: first });
    const runs = async () => RunList.parse((await client.request("GET", `/v1/runs?sessionId=${sessionId}`)).body).runs;
    expect(await runs()).toEqual([expect.objectContaining({ runId: first, title, input: expect.stringMatching(/^Compare the sales/) })]);

    const second = await submit("And by month?", { sessionId });
    await expect
      .poll(async () => (await client.request<RunView>("GET", `/v1/runs/${second}`)).body.status, { timeout: 60_000 })
      .toBe("succeeded");
    expect((await session()).title).toBe(title);
    const [latest] = await runs();
    expect(latest).toMatchObject({ runId: second, input: "And by month?" });
    expect(latest?.title).toBeUndefined();
    // Another tenant's session of the same id is not this one.
    expect((await other.request("GET", `/v1/sessions/${sessionId}`)).status).toBe(404);
  });

  it.each([
    ["/v1/runs?limit=0", 400],
    ["/v1/runs?limit=101", 400],
    ["/v1/runs?limit=abc", 400],
    ["/v1/runs?status=done", 400],
    ["/v1/runs?sessionId=not%20an%20id", 400],
    ["/v1/runs?cursor=bm90IGEgY3Vyc29y", 400],
    ["/v1/runs?cursor=%00%FF", 400],
    ["/v1/runs?colour=blue", 400],
    ["/v1/sessions?limit=-1", 400],
    ["/v1/sessions?cursor=eyJrIjoiJ30", 400],
  ])("answers GET %s with %i and a message", async (path, status) => {
    const res = await client.request<ErrorBody>("GET", path);
    expect(res.status).toBe(status);
    expect(res.body.error.message).toEqual(expect.any(String));
  });

  it("opens a run's stream with a short-lived token instead of the API key, for that run only", async () => {
    const runId = await submit("Hello, stream token");
    const otherRun = await submit("Hello, other run");
    const issued = await client.request("POST", `/v1/runs/${runId}/stream-token`);
    expect(issued.status).toBe(201);
    const { token, expiresAt } = StreamToken.parse(issued.body);
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    expect(token).not.toContain(stack.apiKey);

    const anonymous = new Client(stack.url, "");
    const stream = await fetch(`${stack.url}/v1/runs/${runId}/stream?token=${token}`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await stream.text(); // the stream ends after the terminal event
    expect(text).toMatch(/event: run\.succeeded/);

    expect((await anonymous.request("GET", `/v1/runs/${otherRun}/stream?token=${token}`)).status).toBe(404);
    expect((await anonymous.request("GET", `/v1/runs/${runId}/stream?token=st_${"x".repeat(32)}`)).status).toBe(401);
    expect((await anonymous.request("GET", `/v1/runs/${runId}/stream?token=${stack.apiKey}`)).status).toBe(401);
    // Read-only: the token is no API key.
    expect((await new Client(stack.url, token).request("GET", `/v1/runs/${runId}`)).status).toBe(401);
    expect((await new Client(stack.url, token).request("POST", `/v1/runs/${runId}/cancel`)).status).toBe(401);
    // Another tenant gets no token for this run, and its own token does not open it.
    expect((await other.request("POST", `/v1/runs/${runId}/stream-token`)).status).toBe(404);
    const othersRun = (await other.request<CreateRunResponse>("POST", "/v1/runs", { input: "Hello from another tenant", mode: "react" }))
      .body.runId;
    const othersToken = StreamToken.parse((await other.request("POST", `/v1/runs/${othersRun}/stream-token`)).body).token;
    expect((await anonymous.request("GET", `/v1/runs/${runId}/stream?token=${othersToken}`)).status).toBe(404);

    // Expired: the stored expiry moved into the past, as time would (the wait itself is not worth a test's minutes).
    const fresh = StreamToken.parse((await client.request("POST", `/v1/runs/${runId}/stream-token`)).body).token;
    const valid = await fetch(`${stack.url}/v1/runs/${runId}/stream?token=${fresh}`);
    expect(valid.status).toBe(200);
    await valid.text();
    const { dynamodb, region, tableName, credentials } = stack.endpoints!;
    const dynamo = new DynamoDBClient({ endpoint: dynamodb, region, credentials });
    try {
      await dynamo.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: { pk: { S: `STREAMTOKEN#${createHash("sha256").update(fresh).digest("hex")}` }, sk: { S: "META" } },
          UpdateExpression: "SET expiresAtMs = :past",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeValues: { ":past": { N: String(Date.now() - 1) } },
        }),
      );
    } finally {
      dynamo.destroy();
    }
    const expired = await anonymous.request<ErrorBody>("GET", `/v1/runs/${runId}/stream?token=${fresh}`);
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toEqual(expect.any(String));
    expect((await client.request("POST", `/v1/runs/${"x".repeat(200)}/stream-token`)).status).toBe(400);
  });

  it("serves an OpenAPI 3.1 document that an independent validator accepts, covering every route both ways", async () => {
    const res = await new Client(stack.url, "").request<OpenApiDocument>("GET", "/v1/openapi.json");
    expect(res.status).toBe(200);
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(res.body.openapi).toBe("3.1.0");

    const sample = (path: string) => path.replace(/\{(\w+)\}/g, "x1");
    const documented = Object.entries(res.body.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })),
    );
    // Every route of the router is documented …
    for (const route of routes) {
      const matches = documented.filter((op) => op.method === route.method && route.pattern.test(sample(op.path)));
      expect(matches, `${route.method} ${route.pattern}`).not.toEqual([]);
    }
    // … and every documented operation exists (the stream and the AG-UI run are served by the stream handler).
    for (const op of documented) {
      const exists =
        op.path.endsWith("/stream") ||
        op.path === "/v1/ag-ui" ||
        routes.some((route) => route.method === op.method && route.pattern.test(sample(op.path)));
      expect(exists, `${op.method} ${op.path}`).toBe(true);
    }
    // Each operation names its errors, and the examples are valid requests.
    for (const [path, ops] of Object.entries(res.body.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(Object.keys(op.responses), path).toContain("500");
        // A body over the route's limit is refused on every route that takes one.
        if (method === "post") expect(Object.keys(op.responses), path).toContain("413");
        expect(op.responses["400"].content["application/json"].schema.$ref).toBe("#/components/schemas/Error");
      }
    }
    // Uploads are documented as browsers and curl send them.
    expect(Object.keys(res.body.paths["/v1/files"]!.post.requestBody.content)).toEqual(["application/json", "multipart/form-data", "*/*"]);
    const createExample = OPERATIONS.find((op) => op.method === "post" && op.path === "/v1/runs")!.body!.example;
    expect(CreateRunRequest.safeParse(createExample).success).toBe(true);
  });

  it("answers CORS for the configured origin only", async () => {
    const preflight = (origin: string) =>
      fetch(`${stack.url}/v1/runs`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
      });
    const allowed = await preflight("https://app.example.com");
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(allowed.headers.get("access-control-allow-headers")).toContain("authorization");
    const refused = await preflight("https://evil.example.net");
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    const get = await fetch(`${stack.url}/v1/runs`, {
      headers: { origin: "https://app.example.com", authorization: `Bearer ${stack.apiKey}` },
    });
    expect(get.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const streamPreflight = await fetch(`${stack.url}/v1/runs/run_x/stream`, {
      method: "OPTIONS",
      headers: { origin: "https://app.example.com", "access-control-request-method": "GET" },
    });
    expect(streamPreflight.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
  });

  it("answers a browser's preflight on /mcp and /a2a, as a browser sends it, for the configured origin only", async () => {
    const preflight = (path: string, origin: string, headers: string) =>
      fetch(`${stack.url}${path}`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": headers },
      });
    for (const [path, headers, methods] of [
      ["/mcp", "authorization, content-type, mcp-session-id, mcp-protocol-version", ["GET", "POST", "DELETE"]],
      ["/a2a", "authorization, content-type, a2a-version", ["POST"]],
    ] as const) {
      const allowed = await preflight(path, "https://app.example.com", headers);
      expect(allowed.status, path).toBe(204);
      expect(allowed.headers.get("access-control-allow-origin"), path).toBe("https://app.example.com");
      const allowedMethods = allowed.headers.get("access-control-allow-methods")!.split(/,\s*/);
      expect(allowedMethods, path).toEqual(expect.arrayContaining([...methods]));
      for (const header of headers.split(", ")) expect(allowed.headers.get("access-control-allow-headers"), path).toContain(header);
      // No key was sent, and none is needed for a preflight; another origin gets no CORS headers.
      const refused = await preflight(path, "https://evil.example.net", headers);
      expect(refused.headers.get("access-control-allow-origin"), path).toBeNull();
    }
  });

  it("answers /health without a key, and serves the console at /", async () => {
    const health = await new Client(stack.url, "").request("GET", "/health");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({
      status: "ok",
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      checks: { table: "ok", stateMachine: "ok" },
    });
    const page = await fetch(`${stack.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="/console.js">');
    expect((await fetch(`${stack.url}/console.js`)).headers.get("content-type")).toMatch(/javascript/);
  });
});
