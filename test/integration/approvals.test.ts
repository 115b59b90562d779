import { type AttributeValue, DynamoDBClient, paginateQuery, paginateScan } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, type ExpectStatic, expect, it, vi } from "vitest";
import type { RunEvent } from "../../shared/contracts/events.js";
import { TERMINAL_EVENTS } from "../../shared/contracts/terminal.js";
import { type ErrorBody, eventsOf, type SseFrame } from "../support/client.js";
import { logLines, type RunningStack, startStack } from "../support/localStack.js";
import { RecordingClient, type Seen } from "../support/recordingClient.js";
import { startTogether } from "../support/startTogether.js";

/**
 * Human in the loop, over HTTP against the whole local stack: plan approval, tool
 * approval (approve, reject, edit), ask_user, several executors of one Map step paused at once and
 * resumed independently, the interrupt timeout, wrong decisions refused with nothing changed (one of
 * each status here; every kind of wrong decision in test/unit/functions/api/decide.test.ts), and no
 * task token in anything a client can read.
 *
 * Two stacks: `stack` waits an hour for decisions (every test there decides as soon as it has
 * looked), `short` waits 2 s (only the timeout tests use it) and ends every stream after 2 s, which
 * the client resumes with Last-Event-ID (the stream's time limit is shown here too, to start no
 * third stack for it). Tests poll for states; none sleeps.
 */

const REPORT_INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";
const THREE_INPUT = "Compute 1+1, 2+2 and 3+3, then write a report";
const ASK_INPUT = "Please ask me first, then count the words in this sentence";
/** What a Step Functions task token looks like (the local runtime mints `AQ` + 128 base64url characters). */
const TOKEN_SHAPE = /AQ[A-Za-z0-9_-]{100,}/;
const TERMINAL = ["succeeded", "failed", "cancelled", "timed_out"];

/** Every HTTP answer and stream frame a client saw in this file: none may hold a task token. */
const seen: Seen[] = [];

let stack: RunningStack;
let short: RunningStack;
let client: RecordingClient;
let other: RecordingClient;
let shortClient: RecordingClient;
let dynamo: DynamoDBClient;
let table: string;
/** Runs submitted on `stack`, for the token check of their streams. */
const runIds: string[] = [];
/** The approved write's task token and what a client read of that run, waiting and ended (checked in "task tokens"). */
const approved: { token?: string; seen: { what: string; body: unknown }[] } = { seen: [] };

beforeAll(async () => {
  [stack, short] = await startTogether(
    // TOOL_CATALOG_CACHE_MS=0: each saved policy holds for the very next run.
    startStack({ INTERRUPT_TIMEOUT_SECONDS: "3600", TOOL_CATALOG_CACHE_MS: "0" }, ["other"], { exposeEndpoints: true }),
    // The deployment's limits set short: 2 s for a decision, 2 s a stream (then the client
    // reconnects); 500 ms a model call, so a report run (eight calls or more) outlives a stream.
    startStack({ INTERRUPT_TIMEOUT_SECONDS: "2", STREAM_MAX_SECONDS: "2", STREAM_HEARTBEAT_MS: "500", OFFLINE_MODEL_LATENCY_MS: "500" }),
  );
  client = new RecordingClient(stack.url, stack.apiKey, seen);
  other = new RecordingClient(stack.url, stack.keys.other!, seen);
  shortClient = new RecordingClient(short.url, short.apiKey, seen);
  // Only the DynamoDB endpoint is needed (dynalite takes any region); the local table is "stepwise".
  const { dynamodb, region, tableName, credentials } = stack.endpoints!;
  table = tableName || "stepwise";
  dynamo = new DynamoDBClient({ endpoint: dynamodb, region: region || "us-east-1", credentials });
});

afterAll(async () => {
  dynamo?.destroy();
  await Promise.all([stack?.stop(), short?.stop()]);
});

async function submit(body: Record<string, unknown>, on: RecordingClient = client): Promise<string> {
  const { runId } = await on.submit(body);
  if (on === client) runIds.push(runId);
  return runId;
}

const ofType = <T extends RunEvent["type"]>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

/** Polls the event log until `done(events)` holds. */
async function waitForEvents(runId: string, done: (events: RunEvent[]) => boolean, on: RecordingClient = client, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await on.allEvents(runId);
    if (done(events)) return events;
    if (Date.now() > deadline)
      throw new Error(`run ${runId}: the awaited events did not come; log: ${events.map((e) => e.type).join(" ")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const taskCompleted = (events: RunEvent[], taskId: string, iteration: number) =>
  ofType(events, "task.completed").find((e) => e.data.taskId === taskId && e.data.iteration === iteration);

/** The run's items in the table (record, events, tasks, interrupts with tokens, journal…), as sorted JSON. */
async function runItems(runId: string): Promise<string[]> {
  const items: string[] = [];
  const pages = paginateQuery(
    { client: dynamo },
    {
      TableName: table,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": { S: `RUN#${runId}` } },
      ConsistentRead: true,
    },
  );
  for await (const page of pages)
    for (const item of page.Items ?? []) items.push(JSON.stringify(Object.entries(item).sort(([a], [b]) => a.localeCompare(b))));
  return items.sort();
}

/** The task token stored with an interrupt, once the "Wait for …" state has attached it. */
async function storedToken(runId: string, interruptId: string): Promise<string> {
  return vi.waitFor(
    async () => {
      const items = await scanTokens();
      const token = items.find((t) => t.pk === `RUN#${runId}` && t.sk === `INT#${interruptId}`)?.token;
      if (!token) throw new Error(`no token stored yet for ${interruptId}`);
      return token;
    },
    { timeout: 15_000, interval: 50 },
  );
}

async function scanTokens(): Promise<{ pk: string; sk: string; token: string }[]> {
  const found: { pk: string; sk: string; token: string }[] = [];
  for await (const page of paginateScan({ client: dynamo }, { TableName: table, ConsistentRead: true })) {
    for (const item of (page.Items ?? []) as Record<string, AttributeValue>[]) {
      if (item.taskToken?.S) found.push({ pk: item.pk!.S!, sk: item.sk!.S!, token: item.taskToken.S });
    }
  }
  return found;
}

/** Every string anywhere inside a JSON value, with its path. */
function strings(value: unknown, path = "$"): { path: string; text: string }[] {
  if (typeof value === "string") return [{ path, text: value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`));
  if (value && typeof value === "object")
    return Object.entries(value).flatMap(([k, v]) => [...strings(k, `${path}.<key>`), ...strings(v, `${path}.${k}`)]);
  return [];
}

function expectNoToken(records: { what: string; body: unknown }[], tokens: string[] = []) {
  const leaks = records.flatMap(({ what, body }) =>
    strings(body)
      .filter(({ text }) => TOKEN_SHAPE.test(text) || tokens.some((t) => text.includes(t)))
      .map(({ path, text }) => `${what} at ${path}: ${text.slice(0, 80)}…`),
  );
  expect(leaks).toEqual([]);
}

describe("plan approval", () => {
  it("shows the plan in the interrupt, runs nothing before the approval, then proceeds and succeeds", async () => {
    const runId = await submit({ input: REPORT_INPUT, mode: "plan_solve", approval: { plan: true } });
    const { run, events, pending } = await client.waitForPending(runId, 1);

    expect(run.status).toBe("awaiting_input");
    expect(run.approval).toEqual({ plan: true, tools: "none" });
    expect(pending).toHaveLength(1);
    const interrupt = pending[0];
    expect(interrupt).toMatchObject({ runId, kind: "plan_approval", status: "pending", interruptId: expect.stringMatching(/^int_/) });
    expect(interrupt.resolution).toBeUndefined();
    // The plan a person approves: in the summary as text, in the arguments as data, as on the run.
    expect(interrupt.summary).toContain("Gather the facts");
    expect(interrupt.summary).toContain("Evaluate 17*23 with the calculator");
    expect(interrupt.summary).toContain("Evaluate (120/8)+2^5 with the calculator");
    expect(interrupt.summary).toContain("Write the report");
    expect((interrupt.arguments as any).plan.steps.map((s: any) => [s.title, s.tasks])).toEqual([
      ["Gather the facts", ["Evaluate 17*23 with the calculator", "Evaluate (120/8)+2^5 with the calculator"]],
      ["Write the report", ["Write a report of the results to report.md with write_artifact"]],
    ]);
    expect(run.plan!.steps.map((s: any) => s.tasks)).toEqual((interrupt.arguments as any).plan.steps.map((s: any) => s.tasks));
    expect(run.interrupts).toEqual(run.pendingInterrupts);
    const opened = ofType(events, "interrupt.opened");
    expect(opened).toHaveLength(1);
    expect(opened[0]!.data).toMatchObject({ interruptId: interrupt.interruptId, kind: "plan_approval", summary: interrupt.summary });
    // Nothing executes before a person approves.
    expect(ofType(events, "task.started")).toEqual([]);
    expect(run.tasks).toEqual([]);

    const decided = await client.decide(runId, interrupt.interruptId, { decision: "approve" });
    expect(decided.status).toBe(202);
    expect(decided.body).toMatchObject({
      interruptId: interrupt.interruptId,
      kind: "plan_approval",
      status: "resolved",
      resolution: { decision: "approve" },
    });

    const end = await client.waitForEnd(runId);
    expect(end.run.status, JSON.stringify(end.run.error)).toBe("succeeded");
    expect(end.run.result).toContain("391");
    expect(end.run.result).toContain("47");
    expect(end.run.files.map((f: any) => f.name)).toContain("report.md");
    // One approval of this plan is enough: the same plan is not asked about again after step 1.
    expect(end.run.interrupts).toHaveLength(1);
    expect(end.run.interrupts[0]).toMatchObject({
      interruptId: interrupt.interruptId,
      status: "resolved",
      resolution: { decision: "approve" },
    });
    expect(end.run.pendingInterrupts).toEqual([]);
    const types = end.events.map((e) => e.type);
    const resolvedAt = types.indexOf("interrupt.resolved");
    expect(types.indexOf("interrupt.opened")).toBeLessThan(resolvedAt);
    expect(resolvedAt).toBeLessThan(types.indexOf("task.started"));
    expect(ofType(end.events, "interrupt.resolved").map((e) => e.data)).toEqual([
      { interruptId: interrupt.interruptId, kind: "plan_approval", decision: "approve" },
    ]);
  });

  it("a rejected plan goes back to the planner, which asks again with a new interrupt; approving that one runs it", async () => {
    const runId = await submit({ input: REPORT_INPUT, mode: "plan_solve", approval: { plan: true } });
    const first = (await client.waitForPending(runId, 1)).pending[0];
    const rejected = await client.decide(runId, first.interruptId, { decision: "reject", message: "Add more detail" });
    expect(rejected.status).toBe(202);
    expect(rejected.body).toMatchObject({ status: "resolved", resolution: { decision: "reject", message: "Add more detail" } });

    const { run, events, pending } = await client.waitForPending(runId, 1);
    expect(pending).toHaveLength(1);
    const second = pending[0];
    expect(second.kind).toBe("plan_approval");
    expect(second.interruptId).not.toBe(first.interruptId);
    expect(run.interrupts.find((i: any) => i.interruptId === first.interruptId)).toMatchObject({
      status: "resolved",
      resolution: { decision: "reject", message: "Add more detail" },
    });
    expect(ofType(events, "task.started")).toEqual([]);

    expect((await client.decide(runId, second.interruptId, { decision: "approve" })).status).toBe(202);
    const end = await client.waitForEnd(runId);
    expect(end.run.status, JSON.stringify(end.run.error)).toBe("succeeded");
    expect(end.run.interrupts.map((i: any) => i.resolution.decision).sort()).toEqual(["approve", "reject"]);
    expect(ofType(end.events, "interrupt.resolved").map((e) => e.data.decision)).toEqual(["reject", "approve"]);
  });
});

describe("tool approval", () => {
  /** A run whose step 2 executor waits for approval to call write_artifact. */
  async function pausedAtWrite() {
    const runId = await submit({ input: REPORT_INPUT, mode: "plan_solve", approval: { tools: "write" } });
    const { run, events, pending } = await client.waitForPending(runId, 1);
    expect(pending).toHaveLength(1);
    const interrupt = pending[0];
    expect(interrupt).toMatchObject({ kind: "tool_approval", status: "pending", toolName: "write_artifact", taskId: "s2.t1" });
    expect(interrupt.arguments).toMatchObject({ filename: "report.md", content: expect.stringContaining("391") });
    expect(interrupt.summary).toContain("write_artifact");
    // Read tools ran without asking (step 1's calculators); the write did not happen yet.
    expect(run.interrupts).toHaveLength(1);
    expect(run.files).toEqual([]);
    expect(run.tasks.filter((t: any) => t.iteration === 0).map((t: any) => t.status)).toEqual(["succeeded", "succeeded"]);
    expect(run.tasks.find((t: any) => t.iteration === 1)).toMatchObject({ taskId: "s2.t1", status: "pending" });
    expect(ofType(events, "tool.result").filter((e) => e.data.tool === "write_artifact")).toEqual([]);
    return { runId, interrupt };
  }

  it("approve: write_artifact runs and report.md is in the run's files", async () => {
    const { runId, interrupt } = await pausedAtWrite();
    // What a client reads of the waiting run, and the decision's answers, for the task-token test at the end of this file.
    approved.token = await storedToken(runId, interrupt.interruptId);
    const record = (what: string, body: unknown) => approved.seen.push({ what, body });
    record("GET run (waiting)", await client.run(runId));
    const waiting = await client.allEvents(runId);
    record("events (waiting)", waiting);
    const stream = await client.recordStream(runId, waiting.length);
    expect(stream.frames).toHaveLength(waiting.length);
    record("stream (waiting)", stream.frames);

    const decided = await client.decide(runId, interrupt.interruptId, { decision: "approve" });
    expect(decided.status).toBe(202);
    expect(decided.body).toMatchObject({ status: "resolved", resolution: { decision: "approve" } });
    record("decision", decided.body);
    record("repeated decision", (await client.decide(runId, interrupt.interruptId, { decision: "approve" })).body);

    const { run, events } = await client.waitForEnd(runId);
    record("GET run (ended)", run);
    record("events (ended)", events);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.files.map((f: any) => f.name)).toEqual(["report.md"]);
    const written = ofType(events, "tool.result").filter((e) => e.data.tool === "write_artifact");
    expect(written).toHaveLength(1);
    expect(written[0]!.data).toMatchObject({ ok: true, taskId: "s2.t1", output: expect.stringContaining("Saved report.md") });
    expect(ofType(events, "run.succeeded")[0]!.data.files).toContain("report.md");
    expect(run.interrupts[0]).toMatchObject({ status: "resolved", resolution: { decision: "approve" } });
  });

  it("reject with a message: the executor adapts and says so, no file is written, the run still succeeds", async () => {
    const { runId, interrupt } = await pausedAtWrite();
    const decided = await client.decide(runId, interrupt.interruptId, { decision: "reject", message: "no files today" });
    expect(decided.status).toBe(202);
    expect(decided.body).toMatchObject({ status: "resolved", resolution: { decision: "reject", message: "no files today" } });

    const { run, events } = await client.waitForEnd(runId);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.files).toEqual([]);
    const task = run.tasks.find((t: any) => t.iteration === 1 && t.taskId === "s2.t1")!;
    expect(task.status).toBe("succeeded");
    expect(task.result).toContain("Rejected by the user: no files today");
    expect(taskCompleted(events, "s2.t1", 1)!.data.result).toContain("Rejected by the user: no files today");
    expect(run.result).toContain("Rejected by the user: no files today");
    const result = ofType(events, "tool.result").filter((e) => e.data.tool === "write_artifact");
    expect(result).toHaveLength(1);
    expect(result[0]!.data).toMatchObject({ ok: false, output: "Rejected by the user: no files today." });
    // The instruction the model gets after a rejection stays in its context: not in the answer, the task, or any event.
    for (const text of [run.result, task.result, JSON.stringify(events)]) expect(text).not.toMatch(/do not repeat this call/i);
    expect(ofType(events, "interrupt.resolved").map((e) => e.data)).toEqual([
      { interruptId: interrupt.interruptId, kind: "tool_approval", decision: "reject", message: "no files today" },
    ]);
  });

  it("edit: invalid arguments are refused with 400 and leave it pending; valid ones run instead of the model's", async () => {
    const { runId, interrupt } = await pausedAtWrite();
    const before = await client.allEvents(runId);

    for (const bad of [{ filename: 5 }, { filename: "../escape.md", content: "x" }, { content: "no file name" }]) {
      const refused = await client.decide<ErrorBody>(runId, interrupt.interruptId, { decision: "edit", arguments: bad });
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.body.error.code).toBe("validation_failed");
    }
    const refused = await client.decide<ErrorBody>(runId, interrupt.interruptId, { decision: "edit", arguments: { filename: 5 } });
    expect(refused.body.error.details).toContainEqual(expect.objectContaining({ path: "arguments.filename" }));
    const missing = await client.decide(runId, interrupt.interruptId, { decision: "edit" });
    expect(missing.status).toBe(400);

    const still = await client.run(runId);
    expect(still.status).toBe("awaiting_input");
    expect(still.pendingInterrupts.map((i: any) => i.interruptId)).toEqual([interrupt.interruptId]);
    expect(still.pendingInterrupts[0].resolution).toBeUndefined();
    expect(await client.allEvents(runId)).toEqual(before);

    const edited = { filename: "summary.md", content: "# Edited" };
    const decided = await client.decide(runId, interrupt.interruptId, { decision: "edit", arguments: edited });
    expect(decided.status).toBe(202);
    expect(decided.body).toMatchObject({ status: "resolved", resolution: { decision: "edit", arguments: edited } });

    const { run, events } = await client.waitForEnd(runId);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.files.map((f: any) => f.name)).toEqual(["summary.md"]);
    expect(run.files[0].bytes).toBe(Buffer.byteLength("# Edited"));
    const result = ofType(events, "tool.result").filter((e) => e.data.tool === "write_artifact");
    expect(result).toHaveLength(1);
    expect(result[0]!.data.ok).toBe(true);
    expect(result[0]!.data.output).toContain("The user changed the arguments to");
    expect(result[0]!.data.output).toContain("Saved summary.md");
    expect(ofType(events, "interrupt.resolved").map((e) => e.data.decision)).toEqual(["edit"]);
  });
});

describe("tool policies (Cedar), on the other tenant", () => {
  const SIZE = `@reason("Artifacts may have at most 1,000 characters.")
forbid(principal, action == Action::"write_artifact", resource) when { context.sizes.content > 1000 };`;
  const BIG_FILE = `use write_artifact {"filename": "notes.md", "content": "${"policy ".repeat(200)}"}`;

  async function runToEnd(input: string) {
    const { runId } = await other.submit({ input, mode: "react" });
    const { run, events } = await other.waitForEnd(runId);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    const notes = await other.request("GET", `/v1/runs/${runId}/files/notes.md`);
    return { run, events, notes: String(notes.body) };
  }

  it("enforce denies the large write and the model writes a smaller file; log_only lets it run and says it would have denied", async () => {
    const saved = await other.request("PUT", "/v1/policies/artifact-size", { cedar: SIZE, mode: "enforce" });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({ name: "artifact-size", version: 1, mode: "enforce" });
    try {
      const enforced = await runToEnd(BIG_FILE);
      expect(enforced.notes.length).toBeLessThanOrEqual(1000);
      expect(enforced.notes).toMatch(/^policy policy/);
      const writes = ofType(enforced.events, "tool.result").filter((e) => e.data.tool === "write_artifact");
      expect(writes.map((e) => e.data.ok)).toEqual([false, true]);
      expect(writes[0]!.data.output).toBe("Denied by policy: Artifacts may have at most 1,000 characters.");
      expect(ofType(enforced.events, "guardrail.decided").map((e) => e.data)).toEqual([
        expect.objectContaining({
          kind: "policy",
          stage: "tool_call",
          check: "artifact-size",
          version: 1,
          verdict: "deny",
          mode: "enforce",
          tool: "write_artifact",
        }),
      ]);

      expect(
        (await other.request<{ version: number }>("PUT", "/v1/policies/artifact-size", { cedar: SIZE, mode: "log_only" })).body.version,
      ).toBe(2);
      const logged = await runToEnd(BIG_FILE);
      expect(logged.notes.length).toBe(1400);
      expect(ofType(logged.events, "guardrail.decided").map((e) => [e.data.check, e.data.version, e.data.verdict, e.data.mode])).toEqual([
        ["artifact-size", 2, "deny", "log_only"],
      ]);
      expect((await other.request<{ mode: string }>("GET", "/v1/policies/artifact-size@1")).body.mode).toBe("enforce");
      expect((await other.request<{ policies: any[] }>("GET", "/v1/policies")).body.policies.map((p: any) => [p.name, p.version])).toEqual([
        ["artifact-size", 2],
      ]);
      // The client's tenant has no policy: the same run writes the whole file.
      expect((await client.request("GET", "/v1/policies")).body).toEqual({ policies: [] });
    } finally {
      expect((await other.request("DELETE", "/v1/policies/artifact-size")).status).toBe(204);
    }
  });

  it("a policy that requires approval over an amount opens an approval card with the policy's reason; approved, the call runs", async () => {
    const cedar = `@approval
@reason("Files over 300 characters need a person's approval.")
forbid(principal, action == Action::"write_artifact", resource) when { context.sizes.content > 300 };`;
    expect((await other.request("PUT", "/v1/policies/big-files", { cedar })).status).toBe(201);
    try {
      const { runId } = await other.submit({ input: BIG_FILE, mode: "react" });
      const { pending, events } = await other.waitForPending(runId, 1);
      expect(pending[0]).toMatchObject({
        kind: "tool_approval",
        toolName: "write_artifact",
        reason: "Files over 300 characters need a person's approval.",
        summary: expect.stringMatching(/^Files over 300 characters need a person's approval\.\nRun write_artifact with /),
      });
      expect(ofType(events, "interrupt.opened")[0]!.data.reason).toBe("Files over 300 characters need a person's approval.");
      expect(ofType(events, "guardrail.decided").map((e) => e.data.verdict)).toEqual(["require_approval"]);
      expect((await other.decide(runId, pending[0].interruptId, { decision: "approve" })).status).toBe(202);
      const { run } = await other.waitForEnd(runId);
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      expect(String((await other.request("GET", `/v1/runs/${runId}/files/notes.md`)).body).length).toBe(1400);
    } finally {
      expect((await other.request("DELETE", "/v1/policies/big-files")).status).toBe(204);
    }
  });
});

describe("ask_user", () => {
  it("a ReAct agent asks, the run waits for the answer, and the agent uses it", async () => {
    const runId = await submit({ input: ASK_INPUT, mode: "react" });
    const { run, pending } = await client.waitForPending(runId, 1);
    expect(run.status).toBe("awaiting_input");
    const interrupt = pending[0];
    expect(interrupt).toMatchObject({ kind: "ask_user", status: "pending", toolName: "ask_user" });
    expect(interrupt.question).toContain("What should I know before I do this");
    expect(interrupt.summary).toBe(`The agent asks: ${interrupt.question}`);

    const decided = await client.decide(runId, interrupt.interruptId, { decision: "answer", message: "Use British spelling" });
    expect(decided.status).toBe(202);
    expect(decided.body).toMatchObject({ status: "resolved", resolution: { decision: "answer", message: "Use British spelling" } });

    const end = await client.waitForEnd(runId);
    expect(end.run.status, JSON.stringify(end.run.error)).toBe("succeeded");
    // The answer, then the rest of the task done with it: the words counted.
    expect(end.run.result).toMatch(/^Done\. The user answered: Use British spelling; \d+ characters, 11 words, /);
    expect(ofType(end.events, "interrupt.resolved").map((e) => e.data)).toEqual([
      { interruptId: interrupt.interruptId, kind: "ask_user", decision: "answer", message: "Use British spelling" },
    ]);
  });
});

describe("parallel pauses in one Map step", () => {
  it(
    "three executors wait for approval at once; the last two are approved in reverse order and finish, " +
      "one by one, while the first still waits (run stays awaiting_input); then it is approved and the run succeeds",
    async () => {
      const runId = await submit({ input: THREE_INPUT, mode: "plan_solve", approval: { tools: "all" } });
      const { run, pending } = await client.waitForPending(runId, 3);
      expect(pending).toHaveLength(3);
      expect(pending.map((i) => i.kind)).toEqual(["tool_approval", "tool_approval", "tool_approval"]);
      expect(pending.map((i) => i.toolName)).toEqual(["calculator", "calculator", "calculator"]);
      expect(new Set(pending.map((i) => i.taskId)).size).toBe(3);
      expect(pending.map((i) => (i.arguments as { expression: string }).expression).sort()).toEqual(["1+1", "2+2", "3+3"]);
      expect(run.tasks.filter((t: any) => t.iteration === 0).map((t: any) => t.status)).toEqual(["pending", "pending", "pending"]);
      const [first, second, third] = pending;
      const expected: Record<string, string> = { "1+1": "2", "2+2": "4", "3+3": "6" };

      /** Approves one, waits for its task to complete, and checks the others still wait. */
      const approveAndSeeItFinish = async (interrupt: any, stillWaiting: any[]) => {
        expect((await client.decide(runId, interrupt.interruptId, { decision: "approve" })).status).toBe(202);
        const events = await waitForEvents(runId, (ev) => taskCompleted(ev, interrupt.taskId, 0) !== undefined);
        expect(taskCompleted(events, interrupt.taskId, 0)!.data).toMatchObject({
          status: "succeeded",
          result: expect.stringContaining(`= ${expected[interrupt.arguments.expression]}`),
        });
        for (const waiting of stillWaiting) expect(taskCompleted(events, waiting.taskId, 0)).toBeUndefined();
        const now = await client.run(runId);
        expect(now.status).toBe("awaiting_input");
        expect(now.pendingInterrupts.map((i: any) => i.interruptId).sort()).toEqual(stillWaiting.map((i) => i.interruptId).sort());
        for (const waiting of stillWaiting) {
          expect(now.tasks.find((t: any) => t.iteration === 0 && t.taskId === waiting.taskId)!.status).toBe("pending");
        }
        await vi.waitFor(async () => {
          const task = (await client.run(runId)).tasks.find((t: any) => t.iteration === 0 && t.taskId === interrupt.taskId)!;
          expect(task.status).toBe("succeeded");
        });
        return events;
      };

      await approveAndSeeItFinish(third, [first, second]);
      const events = await approveAndSeeItFinish(second, [first]);
      // They finished in the order they were approved, not in the order they were opened.
      expect(ofType(events, "task.completed").map((e) => e.data.taskId)).toEqual([third.taskId, second.taskId]);

      // The first executor is still paused (its callback waits), and step 2 has not started.
      expect(ofType(events, "plan.updated").at(-1)!.data.plan.steps[1].status).toBe("not_started");
      expect((await client.decide(runId, first.interruptId, { decision: "approve" })).status).toBe(202);

      // Step 2 writes the report: with tools "all" that waits for approval too.
      const write = await client.waitForPending(runId, 1);
      expect(write.pending).toHaveLength(1);
      expect(write.pending[0]).toMatchObject({ kind: "tool_approval", toolName: "write_artifact", taskId: "s2.t1" });
      expect(ofType(write.events, "task.completed").map((e) => e.data.taskId)).toEqual([third.taskId, second.taskId, first.taskId]);
      expect((await client.decide(runId, write.pending[0].interruptId, { decision: "approve" })).status).toBe(202);

      const end = await client.waitForEnd(runId);
      expect(end.run.status, JSON.stringify(end.run.error)).toBe("succeeded");
      expect(end.run.interrupts).toHaveLength(4);
      expect(end.run.interrupts.every((i: any) => i.status === "resolved" && i.resolution.decision === "approve")).toBe(true);
      for (const value of ["= 2", "= 4", "= 6"]) expect(end.run.result).toContain(value);
      expect(end.run.files.map((f: any) => f.name)).toEqual(["report.md"]);
      expect(ofType(end.events, "interrupt.resolved").map((e) => e.data.interruptId)).toEqual([
        third.interruptId,
        second.interruptId,
        first.interruptId,
        write.pending[0].interruptId,
      ]);
    },
  );
});

// Each test waits out the 2 s on a run of its own: they wait side by side.
describe.concurrent("the 2 s stack: the interrupt timeout, and the stream time limit", () => {
  /** Nobody decides: the run ends timed_out, its interrupt too, and a late decision is refused. */
  async function expectTimedOut(expect: ExpectStatic, runId: string, kinds: string[], lateDecision: Record<string, unknown>) {
    const { run, events } = await shortClient.waitForEnd(runId);
    expect(run.status, JSON.stringify(run.error)).toBe("timed_out");
    expect(run.error).toMatchObject({ code: "timed_out", message: expect.stringContaining("No decision arrived in time") });
    expect(run.endedAt).toEqual(expect.any(String));
    expect(events.at(-1)!.type).toBe("run.timed_out");
    expect(ofType(events, "run.timed_out")).toHaveLength(1);
    const opened = ofType(events, "interrupt.opened");
    expect(opened.map((e) => e.data.kind)).toEqual(kinds);
    expect(ofType(events, "interrupt.resolved")).toEqual([]);
    // The interrupts' own status is written with the terminal event; allow those writes to land.
    const ended = await vi.waitFor(
      async () => {
        const now = await shortClient.run(runId);
        expect(now.interrupts.map((i: any) => i.status)).toEqual(kinds.map(() => "timed_out"));
        return now;
      },
      { timeout: 5_000, interval: 50 },
    );
    expect(ended.status).toBe("timed_out");
    expect(ended.pendingInterrupts).toEqual([]);
    expect(ended.interrupts.map((i: any) => i.interruptId).sort()).toEqual(opened.map((e) => e.data.interruptId).sort());
    expect(ended.interrupts.every((i: any) => i.resolution === undefined)).toBe(true);

    for (const { data } of opened) {
      const late = await shortClient.decide<ErrorBody>(runId, data.interruptId, lateDecision);
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe("conflict");
    }
    const after = await shortClient.run(runId);
    expect(after.status).toBe("timed_out");
    expect(after.interrupts.map((i: any) => i.status)).toEqual(kinds.map(() => "timed_out"));
    expect(await shortClient.allEvents(runId)).toEqual(events);
  }

  it("plan approval nobody decides: run timed_out, run.timed_out event, interrupt timed_out, late approve → 409", async ({ expect }) => {
    const runId = await submit({ input: REPORT_INPUT, mode: "plan_solve", approval: { plan: true } }, shortClient);
    await expectTimedOut(expect, runId, ["plan_approval"], { decision: "approve" });
  });

  it("parallel tool approvals inside the Map time out the same way (the Map's catch), both interrupts with the run", async ({ expect }) => {
    const runId = await submit({ input: REPORT_INPUT, mode: "plan_solve", approval: { tools: "all" } }, shortClient);
    await expectTimedOut(expect, runId, ["tool_approval", "tool_approval"], { decision: "approve" });
    const run = await shortClient.run(runId);
    expect(run.interrupts.map((i: any) => i.taskId).sort()).toEqual(["s1.t1", "s1.t2"]);
    expect(run.tasks.map((t: any) => t.status)).toEqual(["pending", "pending"]);
  });

  it("a write approval of a later step times out the same way, and nothing is written", async ({ expect }) => {
    const runId = await submit({ input: REPORT_INPUT, mode: "plan_solve", approval: { tools: "write" } }, shortClient);
    await expectTimedOut(expect, runId, ["tool_approval"], { decision: "approve" });
    expect((await shortClient.run(runId)).files).toEqual([]);
  });

  it("an ask_user question nobody answers times out the same way", async ({ expect }) => {
    const runId = await submit({ input: ASK_INPUT, mode: "react" }, shortClient);
    await expectTimedOut(expect, runId, ["ask_user"], { decision: "answer", message: "too late" });
  });

  it("STREAM_MAX_SECONDS=2: the stream ends by itself saying to reconnect; resuming with Last-Event-ID continues with no gap and no duplicate to the terminal event", async ({
    expect,
  }) => {
    const { runId } = await shortClient.submit({ input: REPORT_INPUT, mode: "plan_solve" });
    const frames: SseFrame[] = [];
    const segments: { frames: number; ms: number; last: string | undefined }[] = [];
    let lastEventId: string | undefined;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const started = Date.now();
      const segment = await shortClient.stream(runId, lastEventId === undefined ? {} : { lastEventId });
      expect(segment.status).toBe(200);
      expect(segment.closed).toBe(true);
      frames.push(...segment.frames);
      const lastItem = segment.items.at(-1);
      segments.push({
        frames: segment.frames.length,
        ms: Date.now() - started,
        last: lastItem?.kind === "comment" ? lastItem.text : lastItem?.frame.event,
      });
      if (segment.frames.length > 0 && TERMINAL_EVENTS.has(segment.frames.at(-1)!.event!)) break;
      // Not the end of the run: the server closed at its time limit, and said where to resume.
      expect(lastItem?.kind, JSON.stringify(segments)).toBe("comment");
      const match = /^stream time limit reached; reconnect with Last-Event-ID: (\d+)$/.exec((lastItem as { text: string }).text);
      expect(match, (lastItem as { text: string }).text).not.toBeNull();
      const cursor = frames.at(-1)?.id ?? "0";
      expect(match![1]).toBe(cursor);
      lastEventId = match![1];
      if (Date.now() > deadline) throw new Error(`no terminal event after ${segments.length} segments`);
    }

    // Several segments; those cut by the limit lasted about 2 s.
    expect(segments.length, JSON.stringify(segments)).toBeGreaterThanOrEqual(2);
    for (const s of segments.slice(0, -1)) {
      // Not before the limit (timers may fire a few ms early), and not long after it.
      expect(s.ms).toBeGreaterThanOrEqual(1_500);
      expect(s.ms).toBeLessThan(30_000);
    }
    const { run, events } = await shortClient.waitForEnd(runId);
    expect(run.status).toBe("succeeded");
    expect(frames.map((f) => Number(f.id))).toEqual(events.map((_, i) => i + 1));
    expect(eventsOf(frames)).toEqual(events);
    expect(frames.at(-1)!.event).toBe("run.succeeded");
    // The handler logged each end with its reason.
    const reasons = await vi.waitFor(
      () => {
        const found = logLines(short, "stream ended")
          .filter((l) => l.runId === runId)
          .map((l) => l.reason as string);
        if (found.length < segments.length) throw new Error(`${found.length} of ${segments.length} 'stream ended' log lines`);
        return found;
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(reasons).toEqual([...Array<string>(segments.length - 1).fill("time limit"), "run ended"]);
  }, 90_000);
});

describe("wrong decisions", () => {
  let planRun: string;
  let planInterrupt: any;
  let askRun: string;
  let askInterrupt: any;

  /** The interrupt is still pending, the run still waits, and nothing of the run changed in the table. */
  async function expectUnchanged(runId: string, interruptId: string, before: { items: string[]; events: RunEvent[] }) {
    const run = await client.run(runId);
    expect(run.status).toBe("awaiting_input");
    expect(run.pendingInterrupts.map((i: any) => i.interruptId)).toEqual([interruptId]);
    expect(run.pendingInterrupts[0].resolution).toBeUndefined();
    // The event log did not grow, and no item of the run (record, interrupt, events…) changed.
    expect((await client.allEvents(runId)).length).toBe(before.events.length);
    expect(await runItems(runId)).toEqual(before.items);
  }

  it("are refused with 4xx, and each leaves the interrupt pending and the run (events, items) unchanged", async () => {
    [planRun, askRun] = await Promise.all([
      submit({ input: REPORT_INPUT, mode: "plan_solve", approval: { plan: true, tools: "write" } }),
      submit({ input: ASK_INPUT, mode: "react" }),
    ]);
    const [plan, ask] = await Promise.all([client.waitForPending(planRun, 1), client.waitForPending(askRun, 1)]);
    planInterrupt = plan.pending[0];
    askInterrupt = ask.pending[0];
    expect(planInterrupt.kind).toBe("plan_approval");
    expect(askInterrupt.kind).toBe("ask_user");
    // Once the callback has its token, nothing more is written while the run waits.
    await Promise.all([storedToken(planRun, planInterrupt.interruptId), storedToken(askRun, askInterrupt.interruptId)]);
    const planBefore = { items: await runItems(planRun), events: await client.allEvents(planRun) };
    const askBefore = { items: await runItems(askRun), events: await client.allEvents(askRun) };

    // One refusal of each status through the whole stack, with the run's items compared in the table;
    // every wrong decision, one by one, is refused over the in-memory ports in test/unit/functions/api/decide.test.ts.
    const cases: {
      name: string;
      runId: string;
      interruptId: string;
      body: unknown;
      as?: RecordingClient;
      status: number;
      code?: string;
    }[] = [
      {
        name: "answer on a plan approval",
        runId: planRun,
        interruptId: planInterrupt.interruptId,
        body: { decision: "answer", message: "yes" },
        status: 409,
        code: "conflict",
      },
      {
        name: "unknown field",
        runId: planRun,
        interruptId: planInterrupt.interruptId,
        body: { decision: "approve", comment: "lgtm" },
        status: 400,
        code: "validation_failed",
      },
      {
        name: "another tenant's ask_user",
        runId: askRun,
        interruptId: askInterrupt.interruptId,
        body: { decision: "answer", message: "hi" },
        as: other,
        status: 404,
        code: "not_found",
      },
      {
        name: "no API key",
        runId: planRun,
        interruptId: planInterrupt.interruptId,
        body: { decision: "approve" },
        as: new RecordingClient(stack.url, "", seen),
        status: 401,
      },
    ];
    for (const c of cases) {
      const res = await (c.as ?? client).decide<ErrorBody>(c.runId, c.interruptId, c.body);
      expect(res.status, `${c.name}: ${JSON.stringify(res.body)}`).toBe(c.status);
      expect(res.body.error, c.name).toMatchObject({ code: c.code ?? expect.any(String), message: expect.any(String) });
      await expectUnchanged(planRun, planInterrupt.interruptId, planBefore);
      await expectUnchanged(askRun, askInterrupt.interruptId, askBefore);
    }
    expect(await client.allEvents(planRun)).toEqual(planBefore.events);
  });

  it("the same decision twice is accepted twice (202) and recorded once; a different one afterwards → 409", async () => {
    const eventsBefore = await client.allEvents(planRun);
    const firstTry = await client.decide(planRun, planInterrupt.interruptId, { decision: "approve" });
    const secondTry = await client.decide(planRun, planInterrupt.interruptId, { decision: "approve" });
    expect(firstTry.status).toBe(202);
    expect(secondTry.status).toBe(202);
    expect(firstTry.body).toMatchObject({
      interruptId: planInterrupt.interruptId,
      status: "resolved",
      resolution: { decision: "approve" },
    });
    expect(secondTry.body).toEqual(firstTry.body);

    const changedMind = await client.decide<ErrorBody>(planRun, planInterrupt.interruptId, { decision: "reject", message: "wait, no" });
    expect(changedMind.status).toBe(409);
    expect(changedMind.body.error).toMatchObject({
      code: "conflict",
      details: { status: "resolved", resolution: { decision: "approve" } },
    });

    // The run cannot end before its write is approved (tools: "write"), so this all happened while it was live.
    const write = await client.waitForPending(planRun, 1);
    expect(write.pending[0]).toMatchObject({ kind: "tool_approval", toolName: "write_artifact" });
    const resolvedEvents = ofType(write.events, "interrupt.resolved").filter((e) => e.data.interruptId === planInterrupt.interruptId);
    expect(resolvedEvents.map((e) => e.data)).toEqual([
      { interruptId: planInterrupt.interruptId, kind: "plan_approval", decision: "approve" },
    ]);
    expect(write.events.slice(0, eventsBefore.length)).toEqual(eventsBefore);
    expect(write.run.interrupts.find((i: any) => i.interruptId === planInterrupt.interruptId)).toMatchObject({
      status: "resolved",
      resolution: { decision: "approve" },
    });

    expect((await client.decide(planRun, write.pending[0].interruptId, { decision: "approve" })).status).toBe(202);
    expect((await client.decide(askRun, askInterrupt.interruptId, { decision: "answer", message: "Go ahead" })).status).toBe(202);
    const [planEnd, askEnd] = await Promise.all([client.waitForEnd(planRun), client.waitForEnd(askRun)]);
    expect(planEnd.run.status, JSON.stringify(planEnd.run.error)).toBe("succeeded");
    expect(askEnd.run.status, JSON.stringify(askEnd.run.error)).toBe("succeeded");
    expect(askEnd.run.result).toMatch(/^Done\. The user answered: Go ahead; \d+ characters, \d+ words, /);
  });

  it("a repeated identical decision stays idempotent (202) after the run has ended; a different one is still 409", async () => {
    const eventsBefore = await client.allEvents(planRun);
    const again = await client.decide(planRun, planInterrupt.interruptId, { decision: "approve" });
    const changedMind = await client.decide(planRun, planInterrupt.interruptId, { decision: "reject" });
    const answerAgain = await client.decide(askRun, askInterrupt.interruptId, { decision: "answer", message: "Go ahead" });
    expect(changedMind.status).toBe(409);
    expect(await client.allEvents(planRun)).toEqual(eventsBefore);
    // A client retrying a decision whose answer it lost must not be told its decision was refused.
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body).toMatchObject({ status: "resolved", resolution: { decision: "approve" } });
    expect(answerAgain.status, JSON.stringify(answerAgain.body)).toBe(202);
  });
});

describe("task tokens", () => {
  it("never appear in a run, its events, its stream or a decision's answer, while waiting or after", async () => {
    // The approved write's run (tool approval, above): read while it waited, decided twice, read after it ended.
    if (!approved.token) throw new Error("the tool approval test did not get as far as its run's task token");
    // The check below is not vacuous: the stored token has the shape it looks for.
    expect(approved.token).toMatch(TOKEN_SHAPE);
    expect(approved.seen.map((r) => r.what)).toEqual([
      "GET run (waiting)",
      "events (waiting)",
      "stream (waiting)",
      "decision",
      "repeated decision",
      "GET run (ended)",
      "events (ended)",
    ]);
    expectNoToken(approved.seen, [approved.token]);

    // And nothing any test of this file saw, on either stack, nor any run's whole stream.
    for (const id of runIds) {
      const run = await client.run(id);
      if (TERMINAL.includes(run.status)) await client.recordStream(id);
    }
    const tokens = (await scanTokens()).map((t) => t.token);
    expect(tokens.length).toBeGreaterThanOrEqual(runIds.length);
    for (const t of tokens) expect(t).toMatch(TOKEN_SHAPE);
    expect(seen.length).toBeGreaterThan(10);
    expectNoToken(seen, tokens);
  });
});
