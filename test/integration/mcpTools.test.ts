import { createServer } from "node:net";
import { DynamoDBClient, paginateScan } from "@aws-sdk/client-dynamodb";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type McpHttpServer, serveMcpOverHttp } from "../../infra/local/mcpHttp.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { ToolList, ToolSourceView } from "../../shared/contracts/responses.js";
import type { ErrorBody } from "../support/client.js";
import { conventionProblems, type OtlpSpan } from "../support/genAiConventions.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { RecordingClient, type Seen } from "../support/recordingClient.js";
import { startXrayDaemon, type XrayDaemon } from "../support/xrayDaemon.js";

/**
 * MCP tool sources over HTTP against the whole local stack and real MCP servers built here with
 * the official SDK's McpServer over Streamable HTTP: registration (SSRF guard, reachability,
 * sealed headers), GET /v1/tools, a plan_solve run whose executors call MCP tools in parallel
 * (text, isError, an image; a call past the per-call timeout is in test/unit/shared/tools/mcp/catalog.test.ts,
 * not waited out here), sources added and deleted between
 * runs, a source down at run time, write-tool approval on an MCP tool, and no header secret in
 * anything a client, the event log, the stream, the table or the stack's logs shows. A UDP
 * listener stands in for the X-Ray daemon: the notifier sends each ended run's GenAI spans there.
 */

const TOKEN = `mcp-secret-${Math.random().toString(36).slice(2)}-token`;
/**
 * The stack's per-call timeout: a call waiting on the demo server to meet another (below) must
 * answer well before it. At 4 s, a loaded machine let the first executor's call wait past it for
 * its partner, and the stack cut a good call off as timed out.
 */
const CALL_TIMEOUT_MS = 15_000;
/** How long a call waits for another on the server: it then answers anyway, still within the call timeout. */
const MEET_WAIT_MS = CALL_TIMEOUT_MS - 5_000;
/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** Every HTTP answer and stream a client saw in this file: none may hold the secret. */
const seen: Seen[] = [];

/**
 * In-flight calls on the demo server, and the most seen at once. With `meet` on, a call waits (up
 * to MEET_WAIT_MS) until two calls have been on the server at once: parallel executors meet there
 * on a busy machine as well, and sequential ones never can; once two have met, none waits.
 */
const inFlight = { now: 0, max: 0, meet: false };

function demoServer(): McpServer {
  const server = new McpServer({ name: "demo", version: "1.0.0" });
  const track = async <T>(work: () => Promise<T>): Promise<T> => {
    inFlight.max = Math.max(inFlight.max, ++inFlight.now);
    try {
      for (const until = Date.now() + MEET_WAIT_MS; inFlight.meet && inFlight.max < 2 && Date.now() < until; )
        await new Promise((r) => setTimeout(r, 10));
      return await work();
    } finally {
      inFlight.now--;
    }
  };
  server.registerTool(
    "add",
    { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
    ({ a, b }) => track(async () => ({ content: [{ type: "text" as const, text: String(a + b) }] })),
  );
  // No annotations: a write tool.
  server.registerTool("upper", { description: "Upper-cases a text and files it.", inputSchema: { text: z.string() } }, ({ text }) =>
    track(async () => ({ content: [{ type: "text" as const, text: text.toUpperCase() }] })),
  );
  server.registerTool("fail", { description: "Always fails.", inputSchema: {}, annotations: { readOnlyHint: true } }, () =>
    track(async () => ({ isError: true, content: [{ type: "text" as const, text: "the database is on fire" }] })),
  );
  server.registerTool("chart", { description: "Draws a chart.", inputSchema: {}, annotations: { readOnlyHint: true } }, () =>
    track(async () => ({
      content: [
        { type: "text" as const, text: "Here is the chart." },
        { type: "image" as const, data: PNG, mimeType: "image/png" },
      ],
    })),
  );
  // Echoes the header it was sent: what it returns must reach nobody unmasked.
  server.registerTool("whoami", { description: "Says who called.", inputSchema: {}, annotations: { readOnlyHint: true } }, (_args, extra) =>
    track(async () => ({ content: [{ type: "text" as const, text: `You sent: ${String(extra.requestInfo?.headers.authorization)}` }] })),
  );
  return server;
}

function pingServer(): McpServer {
  const server = new McpServer({ name: "extra", version: "1.0.0" });
  server.registerTool("ping", { description: "Answers pong.", inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: "text" as const, text: "pong" }],
  }));
  return server;
}

/**
 * Each function keeps its tenant's catalogue this long (as each Lambda container does): a source
 * added or removed reaches the next run once it has passed, not at once in a function that listed
 * the tools just before.
 */
const CATALOG_CACHE_MS = 300;
const catalogsExpire = () => new Promise((resolve) => setTimeout(resolve, CATALOG_CACHE_MS + 100));

let stack: RunningStack;
let client: RecordingClient;
let other: RecordingClient;
let demo: McpHttpServer;
let extra: McpHttpServer;
let billing: McpHttpServer;
let xray: XrayDaemon;
/** The billing server: while its key is `expired`, every tools/call is answered 401; `sent` is what it did. */
const invoices = { expired: false, sent: [] as string[] };

/** A write tool behind a key that can expire between listing and calling. */
function billingServer(): McpServer {
  const server = new McpServer({ name: "billing", version: "1.0.0" });
  server.registerTool("send_invoice", { description: "Sends an invoice.", inputSchema: { to: z.string() } }, async ({ to }) => {
    invoices.sent.push(to);
    return { content: [{ type: "text" as const, text: `invoice sent to ${to}` }] };
  });
  return server;
}
const runIds: string[] = [];

beforeAll(async () => {
  [demo, extra, billing, xray] = await Promise.all([
    serveMcpOverHttp(demoServer, { requiredHeaders: { authorization: `Bearer ${TOKEN}` } }),
    serveMcpOverHttp(pingServer),
    serveMcpOverHttp(billingServer, { refuse: ({ method }) => (invoices.expired && method === "tools/call" ? 401 : undefined) }),
    startXrayDaemon(),
  ]);
  stack = await startStack(
    {
      MCP_CALL_TIMEOUT_MS: String(CALL_TIMEOUT_MS),
      INTERRUPT_TIMEOUT_SECONDS: "3600",
      TOOL_CATALOG_CACHE_MS: String(CATALOG_CACHE_MS),
      AWS_XRAY_DAEMON_ADDRESS: xray.address,
    },
    ["other"],
    {
      exposeEndpoints: true,
    },
  );
  client = new RecordingClient(stack.url, stack.apiKey, seen);
  other = new RecordingClient(stack.url, stack.keys.other!, seen);
}, 300_000);

afterAll(async () => {
  await Promise.all([stack?.stop(), demo?.close(), extra?.close(), billing?.close(), xray?.close()]);
});

const ofType = <T extends RunEvent["type"]>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

async function submit(body: Record<string, unknown>): Promise<string> {
  const { runId } = await client.submit(body);
  runIds.push(runId);
  return runId;
}

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("registering a tool source", () => {
  it("refuses SSRF targets and unreachable servers with 422, junk with 400, and stores nothing", async () => {
    const cases = [
      { body: { name: "meta", url: "http://169.254.169.254/latest/mcp" }, status: 422, code: "forbidden_tool_source_address" },
      { body: { name: "private", url: "http://10.1.2.3/mcp" }, status: 422, code: "forbidden_tool_source_address" },
      { body: { name: "down", url: `http://127.0.0.1:${await closedPort()}/mcp` }, status: 422, code: "tool_source_unreachable" },
      {
        body: { name: "wrongkey", url: demo.url, headers: { authorization: "Bearer nope-nope-nope" } },
        status: 422,
        code: "tool_source_unreachable",
      },
      {
        body: { name: "unknown", url: demo.url, headers: { authorization: `Bearer ${TOKEN}` }, tools: ["nope"] },
        status: 422,
        code: "unknown_tools",
      },
      { body: { name: "Bad Name", url: demo.url }, status: 400, code: "validation_failed" },
      { body: { name: "two__parts", url: demo.url }, status: 400, code: "validation_failed" },
      { body: { name: "ftp", url: "ftp://example.com/mcp" }, status: 400, code: "invalid_tool_source_url" },
      { body: { name: "hdr", url: demo.url, headers: { host: "evil" } }, status: 400, code: "validation_failed" },
      { body: { name: "extra", url: demo.url, surprise: 1 }, status: 400, code: "validation_failed" },
      { body: "[1,2", status: 400, code: "invalid_json" },
    ];
    for (const { body, status, code } of cases) {
      const res = await client.request<ErrorBody | undefined>("POST", "/v1/tool-sources", body);
      expect({ body, status: res.status, code: res.body?.error?.code }).toEqual({ body, status, code });
    }
    const wrongKey = await client.request<ErrorBody>("POST", "/v1/tool-sources", {
      name: "wrongkey",
      url: demo.url,
      headers: { authorization: "Bearer nope-nope-nope" },
    });
    expect(wrongKey.body.error.message).toContain("401");
    expect((await client.request("GET", "/v1/tool-sources")).body).toEqual({ sources: [] });
    expect((await client.request("GET", "/v1/tool-sources/meta")).status).toBe(404);
    expect((await client.request("DELETE", "/v1/tool-sources/NOT%20A%20NAME")).status).toBe(404);
  });

  it("registers a server with a secret header: 201 with its tools and access, the header shown as ***; duplicate name 409", async () => {
    const res = await client.request<ToolSourceView>("POST", "/v1/tool-sources", {
      name: "demo",
      url: demo.url,
      headers: { authorization: `Bearer ${TOKEN}` },
      access: { chart: "write" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: "demo", url: demo.url, headers: { authorization: "***" }, access: { chart: "write" } });
    const byName = Object.fromEntries(res.body.tools.map((t: any) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(["demo__add", "demo__chart", "demo__fail", "demo__upper", "demo__whoami"]);
    expect(byName.demo__add).toMatchObject({ tool: "add", access: "read" });
    expect(byName.demo__upper).toMatchObject({ tool: "upper", access: "write" });
    expect(byName.demo__chart).toMatchObject({ access: "write" }); // the source's override beats readOnlyHint
    // The server got the header: it answers nothing without it.
    expect(demo.requests.some((h) => h.authorization === `Bearer ${TOKEN}`)).toBe(true);

    const again = await client.request("POST", "/v1/tool-sources", {
      name: "demo",
      url: demo.url,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(again.status).toBe(409);
    const one = await client.request("GET", "/v1/tool-sources/demo");
    expect(one.body).toMatchObject({ name: "demo", headers: { authorization: "***" } });
    expect((await client.request<{ sources: ToolSourceView[] }>("GET", "/v1/tool-sources")).body.sources.map((s) => s.name)).toEqual([
      "demo",
    ]);
    // Another tenant sees none of it.
    expect((await other.request("GET", "/v1/tool-sources")).body).toEqual({ sources: [] });
    expect((await other.request("GET", "/v1/tool-sources/demo")).status).toBe(404);
  });

  it("GET /v1/tools lists the built-ins and the source's tools with schema, source and access", async () => {
    const { body } = await client.request<ToolList>("GET", "/v1/tools");
    const byName = Object.fromEntries(body.tools.map((t: any) => [t.name, t]));
    expect(byName.calculator).toMatchObject({ source: "builtin", access: "read" });
    expect(byName.demo__add).toMatchObject({
      source: "demo",
      access: "read",
      description: "Adds two numbers.",
      parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    });
    expect(byName.demo__upper).toMatchObject({ source: "demo", access: "write" });
    const others = (await other.request<ToolList>("GET", "/v1/tools")).body.tools.map((t) => t.name);
    expect(others).toContain("calculator");
    expect(others.some((name: string) => name.startsWith("demo__"))).toBe(false);
  });
});

describe("runs that use MCP tools", () => {
  it("plan_solve: executors call MCP tools in parallel; text and isError reach the events and the answer", async () => {
    Object.assign(inFlight, { max: 0, meet: true });
    const runId = await submit({
      mode: "plan_solve",
      input:
        'use demo__add {"a": 2, "b": 3} and use demo__fail {} and use demo__whoami {} and use demo__add {"a": 40, "b": 2, "persona": "Math tutor"}',
    });
    const { run, events } = await client.waitForEnd(runId, 120_000).finally(() => (inFlight.meet = false));
    expect(run.status).toBe("succeeded");
    const called = ofType(events, "tool.called").filter((e) => e.data.tool.startsWith("demo__"));
    expect(called.map((e) => e.data.tool).sort()).toEqual(["demo__add", "demo__add", "demo__fail", "demo__whoami"]);
    // Persona: the model's own, else one derived from the tool; never among the arguments.
    expect(called.find((e) => (e.data.arguments as any).a === 40)).toMatchObject({
      data: { persona: "Math tutor", arguments: { a: 40, b: 2 } },
    });
    expect(called.find((e) => (e.data.arguments as any).a === 2)?.data.persona).toBe("Add specialist");

    const results = Object.fromEntries(ofType(events, "tool.result").map((e) => [e.data.callId, e.data]));
    const resultOf = (tool: string) => called.filter((c) => c.data.tool === tool).map((c) => results[c.data.callId]!);
    expect(
      resultOf("demo__add")
        .map((r) => [r.ok, r.output])
        .sort(),
    ).toEqual([
      [true, "42"],
      [true, "5"],
    ]);
    expect(resultOf("demo__fail")[0]).toMatchObject({ ok: false, output: expect.stringContaining("the database is on fire") });
    expect(resultOf("demo__whoami")[0]!.output).toBe("You sent: ***");
    // Several calls were on the server at once: the executors ran in parallel.
    expect(inFlight.max).toBeGreaterThanOrEqual(2);
    expect(run.result).toContain("5");
    expect(run.result).toContain("42");
    expect(run.result).toContain("the database is on fire");
  }, 180_000);

  it("an image from an MCP tool becomes a file of the run with its content type", async () => {
    const runId = await submit({ mode: "react", input: "use demo__chart {}" });
    // demo__chart is write by the source's access override, but this run asks for no approval.
    const { run, events } = await client.waitForEnd(runId, 60_000);
    expect(run.status).toBe("succeeded");
    const result = ofType(events, "tool.result").find((e) => e.data.tool === "demo__chart")!;
    const name = /saved as file (\S+\.png)/.exec(result.data.output)?.[1];
    expect(name, result.data.output).toBeDefined();
    expect(run.files.find((f: any) => f.name === name)).toMatchObject({
      contentType: "image/png",
      bytes: Buffer.from(PNG, "base64").byteLength,
    });
    expect(run.result).toContain("Here is the chart.");
  });

  it("a source added mid-session is used by the next run, and a deleted one is gone, with no restart", async () => {
    const added = await client.request("POST", "/v1/tool-sources", { name: "extra", url: extra.url });
    expect(added.status).toBe(201);
    await catalogsExpire();
    const first = await submit({ mode: "react", input: "use extra__ping {}" });
    const used = await client.waitForEnd(first, 60_000);
    expect(ofType(used.events, "tool.result").find((e) => e.data.tool === "extra__ping")).toMatchObject({
      data: { ok: true, output: "pong" },
    });
    expect(used.run.result).toContain("pong");

    expect((await client.request("DELETE", "/v1/tool-sources/extra")).status).toBe(204);
    expect((await client.request("DELETE", "/v1/tool-sources/extra")).status).toBe(404);
    const tools = (await client.request<ToolList>("GET", "/v1/tools")).body.tools.map((t) => t.name);
    expect(tools).not.toContain("extra__ping");
    await catalogsExpire();
    const second = await submit({ mode: "react", input: "use extra__ping {}" });
    const gone = await client.waitForEnd(second, 60_000);
    expect(gone.run.status).toBe("succeeded");
    expect(ofType(gone.events, "tool.called").map((e) => e.data.tool)).not.toContain("extra__ping");
  });

  it("a source that is down at run time: its tools are missing from the run and one tool_source.unavailable event says why", async () => {
    const flaky = await serveMcpOverHttp(pingServer);
    try {
      expect((await client.request("POST", "/v1/tool-sources", { name: "flaky", url: flaky.url })).status).toBe(201);
    } finally {
      await flaky.close();
    }
    await catalogsExpire();
    const runId = await submit({ mode: "plan_solve", input: 'use flaky__ping {} and use demo__add {"a": 1, "b": 1}' });
    const { run, events } = await client.waitForEnd(runId, 90_000);
    expect(run.status).toBe("succeeded");
    const down = ofType(events, "tool_source.unavailable");
    expect(down.map((e) => e.data.source)).toEqual(["flaky"]);
    expect(down[0]!.data.reason).toMatch(/ECONNREFUSED|fetch failed|connect/i);
    expect(ofType(events, "tool.called").map((e) => e.data.tool)).not.toContain("flaky__ping");
    expect(ofType(events, "tool.result").find((e) => e.data.tool === "demo__add")).toMatchObject({ data: { ok: true, output: "2" } });
    expect((await client.request("DELETE", "/v1/tool-sources/flaky")).status).toBe(204);
  });
});

describe("approval of MCP write tools", () => {
  async function pendingApproval(input: string) {
    const runId = await submit({ mode: "react", input, approval: { tools: "write" } });
    const { pending } = await client.waitForPending(runId, 1, 60_000);
    return { runId, interrupt: pending[0] };
  }

  it("a read MCP tool runs without asking", async () => {
    const runId = await submit({ mode: "react", input: 'use demo__add {"a": 20, "b": 1}', approval: { tools: "write" } });
    const { run, events } = await client.waitForEnd(runId, 60_000);
    expect(run.status).toBe("succeeded");
    expect(ofType(events, "interrupt.opened")).toEqual([]);
    expect(run.result).toContain("21");
  });

  it("approve runs the write tool", async () => {
    const { runId, interrupt } = await pendingApproval('use demo__upper {"text": "hello"}');
    expect(interrupt).toMatchObject({ kind: "tool_approval", toolName: "demo__upper", arguments: { text: "hello" } });
    expect((await client.decide(runId, interrupt.interruptId, { decision: "approve" })).status).toBe(202);
    const { run, events } = await client.waitForEnd(runId, 60_000);
    expect(ofType(events, "tool.result").find((e) => e.data.tool === "demo__upper")).toMatchObject({ data: { ok: true, output: "HELLO" } });
    expect(run.result).toContain("HELLO");
  });

  it("reject keeps the tool from running", async () => {
    const { runId, interrupt } = await pendingApproval('use demo__upper {"text": "secret plans"}');
    expect((await client.decide(runId, interrupt.interruptId, { decision: "reject", message: "not now" })).status).toBe(202);
    const { run, events } = await client.waitForEnd(runId, 60_000);
    expect(run.status).toBe("succeeded");
    expect(ofType(events, "tool.result").find((e) => e.data.tool === "demo__upper")).toMatchObject({ data: { ok: false } });
    expect(run.result).not.toContain("SECRET PLANS");
  });

  it("edit is validated against the MCP tool's input schema: a schema error is 400 and changes nothing; a valid edit runs", async () => {
    const { runId, interrupt } = await pendingApproval('use demo__upper {"text": "draft"}');
    const wrong = await client.decide<ErrorBody>(runId, interrupt.interruptId, { decision: "edit", arguments: { text: 5 } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe("validation_failed");
    const missing = await client.decide(runId, interrupt.interruptId, { decision: "edit", arguments: {} });
    expect(missing.status).toBe(400);
    expect((await client.run(runId)).pendingInterrupts.map((i: any) => i.interruptId)).toEqual([interrupt.interruptId]);

    expect((await client.decide(runId, interrupt.interruptId, { decision: "edit", arguments: { text: "final" } })).status).toBe(202);
    const { run, events } = await client.waitForEnd(runId, 60_000);
    expect(ofType(events, "tool.result").find((e) => e.data.tool === "demo__upper")?.data.output).toContain("FINAL");
    expect(run.result).toContain("FINAL");
  });
});

describe("a tool source whose key expired at call time", () => {
  const invoice = (to: string) => `use billing__send_invoice {"to": "${to}"}`;
  /** A run whose invoice call is refused (401): it waits on a tool_failure, nothing sent. */
  async function refusedCall(to: string) {
    invoices.expired = true;
    const runId = await submit({ mode: "react", input: invoice(to) });
    const { pending } = await client.waitForPending(runId, 1, 60_000);
    expect(pending[0]).toMatchObject({
      kind: "tool_failure",
      toolName: "billing__send_invoice",
      arguments: { to },
      failure: { attempt: 1, reason: "unauthorized", status: 401, error: expect.stringContaining("401") },
    });
    expect(invoices.sent).not.toContain(to);
    return { runId, interruptId: pending[0].interruptId as string };
  }

  it("pauses the task; after retry the call runs once more and succeeds, with no more model calls than without the failure", async () => {
    expect((await client.request("POST", "/v1/tool-sources", { name: "billing", url: billing.url })).status).toBe(201);
    await catalogsExpire();
    invoices.expired = false;
    const reference = await client.waitForEnd(await submit({ mode: "react", input: invoice("ref") }), 60_000);
    expect(reference.run.status).toBe("succeeded");

    const { runId, interruptId } = await refusedCall("acme");
    // Not a decision this pause takes: 409, and it still waits.
    expect((await client.decide(runId, interruptId, { decision: "approve" })).status).toBe(409);
    invoices.expired = false; // the key is renewed
    expect((await client.decide(runId, interruptId, { decision: "retry" })).status).toBe(202);
    const { run, events } = await client.waitForEnd(runId, 60_000);
    expect(run.status).toBe("succeeded");
    expect(run.result).toContain("invoice sent to acme");
    expect(invoices.sent.filter((to) => to === "acme")).toEqual(["acme"]);
    expect(run.usage.llmCalls).toBe(reference.run.usage.llmCalls);
    expect(ofType(events, "tool.called").filter((e) => e.data.tool === "billing__send_invoice")).toHaveLength(1);
    expect(ofType(events, "tool.result").filter((e) => e.data.tool === "billing__send_invoice")).toMatchObject([
      { data: { ok: true, output: "invoice sent to acme" } },
    ]);
    expect(ofType(events, "interrupt.resolved")).toMatchObject([{ data: { kind: "tool_failure", decision: "retry" } }]);

    // Its trace: OpenTelemetry GenAI spans that fit the convention, the refused attempt and the retry each a span.
    const trace = await client.request<{ resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }>("GET", `/v1/runs/${runId}/trace`);
    expect(trace.status).toBe(200);
    const spans: OtlpSpan[] = trace.body.resourceSpans[0].scopeSpans[0].spans;
    expect(spans.flatMap(conventionProblems)).toEqual([]);
    const invoiceSpans = spans.filter((s) => s.name === "execute_tool billing__send_invoice");
    expect(invoiceSpans.map((s) => s.attributes.find((a) => a.key === "error.type")?.value.stringValue)).toEqual([
      "unauthorized",
      undefined,
    ]);
    expect(spans.filter((s) => s.name.startsWith("chat ")).length).toBe(run.usage.llmCalls);
    expect((await other.request("GET", `/v1/runs/${runId}/trace`)).status).toBe(404);

    // The same spans reached X-Ray's daemon when the run ended: a segment document each, under the
    // run's trace id in X-Ray's form, nested and timed as the trace says, the attributes as metadata.
    const [root] = spans;
    const documents = await xray.trace(`1-${root.traceId.slice(0, 8)}-${root.traceId.slice(8)}`, spans.length);
    expect(xray.problems).toEqual([]);
    const sent = documents.map((d) => ({
      name: d.name,
      id: d.id,
      parent: d.parent_id,
      start: d.start_time * 1e3,
      end: d.end_time! * 1e3,
      attributes: Object.keys(d.metadata?.default ?? {}).sort(),
    }));
    const expected = spans.map((s) => ({
      name: s.name,
      id: s.spanId,
      parent: s.parentSpanId,
      start: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
      end: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
      attributes: s.attributes.map((a) => a.key).sort(),
    }));
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect(sent.sort(byId).map((d) => ({ ...d, start: Math.round(d.start), end: Math.round(d.end) }))).toEqual(expected.sort(byId));
    const failed = documents.find((d) => d.id === invoiceSpans[0].spanId);
    expect(failed).toMatchObject({ type: "subsegment", fault: true, cause: { exceptions: [{ type: "unauthorized" }] } });
    expect(documents.find((d) => !d.parent_id)?.annotations).toMatchObject({
      stepwise_run_id: runId,
      gen_ai_operation_name: "invoke_agent",
    });
  });

  it("skip hands the agent the person's message instead; fail ends the run with the reason; neither sends anything", async () => {
    const [skipped, failed] = await Promise.all([refusedCall("skipco"), refusedCall("failco")]);
    expect((await client.decide(skipped.runId, skipped.interruptId, { decision: "skip", message: "billing is closed today" })).status).toBe(
      202,
    );
    expect((await client.decide(failed.runId, failed.interruptId, { decision: "fail", message: "wrong customer" })).status).toBe(202);
    const [skipEnd, failEnd] = await Promise.all([client.waitForEnd(skipped.runId, 60_000), client.waitForEnd(failed.runId, 60_000)]);
    expect(skipEnd.run.status).toBe("succeeded");
    expect(ofType(skipEnd.events, "tool.result").find((e) => e.data.tool === "billing__send_invoice")).toMatchObject({
      data: { ok: false, output: "Skipped by the user: billing is closed today" },
    });
    expect(failEnd.run.status).toBe("failed");
    expect(failEnd.run.error!.message).toContain("wrong customer");
    expect(invoices.sent).not.toContain("skipco");
    expect(invoices.sent).not.toContain("failco");
    invoices.expired = false;
  });
});

describe("the header secret", () => {
  it("appears in no response, event, stream, table item or log line", async () => {
    for (const runId of runIds) {
      seen.push({ what: `events ${runId}`, body: await client.allEvents(runId) });
      const stream = await client.stream(runId);
      expect(stream.closed).toBe(true);
      seen.push({ what: `stream ${runId}`, body: stream.frames });
    }
    const leaks = seen.filter(({ body }) => JSON.stringify(body ?? "").includes(TOKEN)).map(({ what }) => what);
    expect(leaks).toEqual([]);
    expect(stack.logs.join("\n")).not.toContain(TOKEN);
    expect(seen.length).toBeGreaterThan(runIds.length * 2);

    // At rest the header is sealed: no item of the table holds it in the clear.
    const { dynamodb, region, tableName, credentials } = stack.endpoints!;
    const dynamo = new DynamoDBClient({ endpoint: dynamodb, region, credentials });
    try {
      let items = 0;
      for await (const page of paginateScan({ client: dynamo }, { TableName: tableName })) {
        for (const item of page.Items ?? []) {
          items++;
          expect(JSON.stringify(item)).not.toContain(TOKEN);
        }
      }
      expect(items).toBeGreaterThan(10);
    } finally {
      dynamo.destroy();
    }
  });
});
