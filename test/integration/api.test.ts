import { DynamoDBClient, paginateScan } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { CreateRunResponse, EventList, ToolList } from "../../shared/contracts/responses.js";
import { Behind } from "../support/aws.js";
import { Client, type ErrorBody } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { untilQuiet } from "../support/quietTable.js";

/**
 * The HTTP API's contract at its edges: tenants are isolated, and every bad request gets a 4xx
 * with `{error: {code, message}}` and changes nothing. "Changes nothing" is checked behind the
 * API: the stack's ready line reports its DynamoDB endpoint, and the whole table is compared before and after the bad requests (a run's record is
 * written before its execution starts, so no record also means no execution).
 */
let stack: RunningStack;
let main: Client;
let other: Client;
let bad: Client;
let dynamo: DynamoDBClient;

beforeAll(async () => {
  stack = await startStack({}, ["other", "bad"], { exposeEndpoints: true });
  main = new Client(stack.url, stack.apiKey);
  other = new Client(stack.url, stack.keys.other!);
  bad = new Client(stack.url, stack.keys.bad!);
  const { dynamodb, region, credentials } = stack.endpoints!;
  dynamo = new DynamoDBClient({ endpoint: dynamodb, region, credentials });
});

afterAll(async () => {
  dynamo?.destroy();
  await stack?.stop();
});

/** Every item of the table, as sorted JSON lines. */
async function tableSnapshot(): Promise<string[]> {
  const items: string[] = [];
  for await (const page of paginateScan({ client: dynamo }, { TableName: stack.endpoints!.tableName, ConsistentRead: true })) {
    for (const item of page.Items ?? [])
      items.push(JSON.stringify(Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)))));
  }
  return items.sort();
}

async function runsOfTenant(tenant: string): Promise<string[]> {
  return (await tableSnapshot())
    .map((line) => JSON.parse(line))
    .filter((item) => item.sk?.S === "META" && item.pk?.S?.startsWith("RUN#") && item.tenantId?.S === tenant)
    .map((item) => item.runId.S as string);
}

function expectError(res: { status: number; body: any }, status: number, code?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }) });
  expect(res.body.error.message.length).toBeGreaterThan(0);
  if (code) expect(res.body.error.code).toBe(code);
}

describe("bad requests get a clear 4xx and change nothing", () => {
  let before: string[];
  let probeRunId: string;

  beforeAll(async () => {
    // A run id that exists (the main tenant's), for the checks on other routes; it must be done
    // before the snapshot so nothing is still being written while the bad requests are sent.
    probeRunId = (await main.submit({ input: "What is 2+2?", mode: "react" })).runId;
    await main.waitForEnd(probeRunId);
    // The run's end is followed by writes in the background (its notification, its state-transition
    // count last): wait for them and until the table stops changing, so the comparison sees only the requests'.
    const behind = new Behind(stack.endpoints!);
    await behind.untilEndHandled(probeRunId).finally(() => behind.destroy());
    before = JSON.parse(await untilQuiet(async () => JSON.stringify(await tableSnapshot())));
  });

  const post = (body: unknown, headers: Record<string, string> = {}) => bad.request<ErrorBody>("POST", "/v1/runs", body, headers);

  it("invalid JSON → 400", async () => {
    expectError(await post('{"input": "hello",'), 400, "invalid_json");
    expectError(await post("not json at all"), 400, "invalid_json");
  });

  it("no body → 4xx", async () => {
    const res = await bad.request("POST", "/v1/runs", undefined, { "content-type": "application/json" });
    expect([400, 415]).toContain(res.status);
    expectError(res, res.status);
  });

  it("a content type other than JSON → 415", async () => {
    expectError(await post('{"input":"hello"}', { "content-type": "text/plain" }), 415, "unsupported_media_type");
    expectError(await post("input=hello", { "content-type": "application/x-www-form-urlencoded" }), 415);
  });

  it.each([
    ["missing input", {}, "input"],
    ["empty input", { input: "" }, "input"],
    ["blank input", { input: "   \n\t " }, "input"],
    ["input not a string", { input: 42 }, "input"],
    ["input null", { input: null }, "input"],
    ["a body that is not an object", ["hello"], ""],
    ["unknown field", { input: "x", foo: 1 }, "foo"],
    ["mode not auto/react/plan_solve", { input: "x", mode: "turbo" }, "mode"],
    ["deepThink not a boolean", { input: "x", deepThink: "yes" }, "deepThink"],
    ["metadata with a non-string value", { input: "x", metadata: { team: 7 } }, "metadata"],
    ["metadata not an object", { input: "x", metadata: "team=7" }, "metadata"],
    [
      "too many metadata keys",
      { input: "x", metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) },
      "metadata",
    ],
    ["sessionId with bad characters", { input: "x", sessionId: "../etc/passwd" }, "sessionId"],
    ["sessionId too long", { input: "x", sessionId: "s".repeat(65) }, "sessionId"],
  ])("%s → 400 naming the problem", async (_name, body, field) => {
    const res = await post(body);
    expectError(res, 400);
    expect(res.body.error.message).toContain(field);
  });

  it("an input over 96,000 bytes of UTF-8 → 413 (32,000 Chinese characters and one more byte)", async () => {
    const res = await post({ input: `${"数".repeat(32_000)}a` });
    expectError(res, 413, "payload_too_large");
    expect(res.body.error.message).toBe("input has 96001 bytes (UTF-8); the limit is 96000 bytes");
  });

  it("a body over 256 KiB → 413, even when it is valid JSON", async () => {
    expectError(await post(`{"input": "hello"${" ".repeat(256 * 1024)}}`), 413, "payload_too_large");
  });

  it("no Authorization → 401 (even with a valid body)", async () => {
    const res = await new Client(stack.url, "").request("POST", "/v1/runs", { input: "What is 2+2?" });
    expectError(res, 401, "unauthorized");
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it("a wrong or malformed key → 401", async () => {
    expectError(await new Client(stack.url, "sk_not_a_key").request("POST", "/v1/runs", { input: "What is 2+2?" }), 401, "unauthorized");
    expectError(await main.request("POST", "/v1/runs", { input: "What is 2+2?" }, { authorization: `Basic ${stack.apiKey}` }), 401);
    expectError(await main.request("POST", "/v1/runs", { input: "What is 2+2?" }, { authorization: "Bearer" }), 401);
  });

  it("an unknown run id → 404, on the run and its events", async () => {
    expectError(await bad.request("GET", "/v1/runs/run_doesnotexist0000"), 404, "not_found");
    expectError(await bad.request("GET", "/v1/runs/run_doesnotexist0000/events"), 404, "not_found");
  });

  it("a malformed run id → 4xx, never a 5xx", async () => {
    for (const id of ["bad$id", "x".repeat(200), "%00", "..", "run_%E2%9C%93"]) {
      const res = await bad.request("GET", `/v1/runs/${id}`);
      expect([400, 404], id).toContain(res.status);
      expectError(res, res.status);
    }
  });

  it("an unknown route → 404", async () => {
    expectError(await bad.request("GET", "/v1/nothing"), 404, "not_found");
    expectError(await bad.request("GET", "/v2/runs"), 404);
    expectError(await bad.request("GET", `/v1/runs/${probeRunId}/nothing`), 404);
  });

  it("a wrong method → 405", async () => {
    expectError(await bad.request("DELETE", `/v1/runs/${probeRunId}`), 405, "method_not_allowed");
    expectError(await bad.request("PUT", "/v1/runs", { input: "x" }), 405, "method_not_allowed");
    expectError(await bad.request("POST", `/v1/runs/${probeRunId}/events`, {}), 405, "method_not_allowed");
  });

  it.each([["after=-1"], ["after=abc"], ["after=1.5"], ["limit=0"], ["limit=abc"], ["limit=501"], ["foo=1"]])(
    "events with ?%s → 400",
    async (query) => {
      const res = await main.request("GET", `/v1/runs/${probeRunId}/events?${query}`);
      expectError(res, 400);
    },
  );

  it("none of those requests changed anything: the table is exactly as before", async () => {
    expect(await tableSnapshot()).toEqual(before);
    expect(await runsOfTenant("bad")).toEqual([]);
  });

  it("and a valid request from the same tenant afterwards works: one run, which succeeds", async () => {
    const created = await bad.request<CreateRunResponse>("POST", "/v1/runs", {
      input: "What is 2+2?",
      mode: "react",
      metadata: { team: "qa" },
      sessionId: "ses-qa_1",
    });
    expect(created.status).toBe(202);
    expect(created.headers.get("location")).toBe(created.body.links.self);
    const { run } = await bad.waitForEnd(created.body.runId);
    expect(run.status).toBe("succeeded");
    expect(run.metadata).toEqual({ team: "qa" });
    expect(run.sessionId).toBe("ses-qa_1");
    expect(await runsOfTenant("bad")).toEqual([created.body.runId]);
  });

  it("an input of exactly 96,000 bytes (32,000 Chinese characters) is accepted", async () => {
    const res = await bad.request("POST", "/v1/runs", { input: "数".repeat(32_000), mode: "react" });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
  });
});

describe("405 responses", () => {
  // RFC 9110 §15.5.6: "The origin server MUST generate an Allow header field in a 405 response
  // containing a list of the target resource's currently supported methods."
  it("say which methods are allowed", async () => {
    const res = await main.request("DELETE", "/v1/runs");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow") ?? "").toMatch(/\bPOST\b/);
  });
});

describe("tenant isolation", () => {
  let runId: string;
  beforeAll(async () => {
    runId = (await main.submit({ input: "What is 12*(3+4)?", mode: "react" })).runId;
    await main.waitForEnd(runId);
  });

  it("the owner sees the run, its events and its stream", async () => {
    expect((await main.request("GET", `/v1/runs/${runId}`)).status).toBe(200);
    const events = await main.request<z.infer<typeof EventList>>("GET", `/v1/runs/${runId}/events`);
    expect(events.status).toBe(200);
    expect(events.body.events.length).toBeGreaterThan(0);
    const stream = await main.stream(runId);
    expect(stream.status).toBe(200);
    expect(stream.frames.length).toBe(events.body.events.length);
  });

  it("another tenant gets 404 — exactly as for a run that does not exist — on the run, its events and its stream", async () => {
    const missing = "run_doesnotexist0000";
    for (const [path, missingPath] of [
      [`/v1/runs/${runId}`, `/v1/runs/${missing}`],
      [`/v1/runs/${runId}/events`, `/v1/runs/${missing}/events`],
    ]) {
      const res = await other.request<ErrorBody>("GET", path!);
      expectError(res, 404, "not_found");
      const reference = await other.request<ErrorBody>("GET", missingPath!);
      expect(res.body.error.message.replace(runId, "ID")).toBe(reference.body.error.message.replace(missing, "ID"));
      expect(JSON.stringify(res.body)).not.toContain("input");
    }
    const stream = await other.stream(runId);
    expect(stream.status).toBe(404);
    expect(stream.frames).toEqual([]);
    expect(stream.body?.error.code).toBe("not_found");
  });

  it("another tenant cannot decide the run's interrupts either", async () => {
    const res = await other.request("POST", `/v1/runs/${runId}/interrupts/int_x`, { decision: "approve" });
    expectError(res, 404, "not_found");
  });

  it("the other tenant's own runs are its own", async () => {
    const mine = await other.submit({ input: "What is 6*7?", mode: "react" });
    expect((await other.request("GET", `/v1/runs/${mine.runId}`)).status).toBe(200);
    expectError(await main.request("GET", `/v1/runs/${mine.runId}`), 404, "not_found");
  });
});

describe("GET /v1/tools", () => {
  it("lists the agents' tools with their JSON schemas, and which ones write", async () => {
    const res = await main.request<ToolList>("GET", "/v1/tools");
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.tools.map((t) => [t.name, t]));
    expect(Object.keys(byName)).toEqual(
      expect.arrayContaining(["calculator", "text_stats", "write_artifact", "read_artifact", "ask_user"]),
    );
    expect(byName.write_artifact.access).toBe("write");
    expect(byName.calculator.access).toBe("read");
    expect(byName.ask_user.asksUser).toBe(true);
    expect(byName.calculator.parameters).toMatchObject({
      type: "object",
      properties: { expression: { type: "string" } },
      required: ["expression"],
    });
  });

  it("needs a key like every route", async () => {
    expectError(await new Client(stack.url, "").request("GET", "/v1/tools"), 401, "unauthorized");
  });
});
