import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { CreateRunResponse } from "../../shared/contracts/responses.js";
import { Behind } from "../support/aws.js";
import { Client, type ErrorBody, eventsOf } from "../support/client.js";
import { logLines, type RunningStack, startStack } from "../support/localStack.js";
import { Receiver, scripts } from "../support/receiver.js";
import { startTogether } from "../support/startTogether.js";

/**
 * Async runs over HTTP against the whole local stack: cancel, idempotent submit,
 * backpressure (429 + Retry-After), and the stream's lifetime (a dropped client stops its handler;
 * the deployment's stream time limit, STREAM_MAX_SECONDS, is shown on approvals.test.ts's 2 s
 * stack, which sets the deployment's limits short).
 *
 * The offline model is slow (800 ms a call) so runs are long enough to act on mid-run; the stack
 * allows 2 active runs per tenant (tenants kept apart per concern: the main key for backpressure,
 * "cancel", "idem", "other"). Tests poll for states with deadlines; none sleeps. The tenant
 * "streams" caps its own open streams at 2 (`maxOpenStreams`); "streams2" keeps the deployment's cap.
 */

const REPORT = { input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve" } as const;
const SIMPLE = { input: "What is 2+2?", mode: "react" } as const;
const TERMINAL_EVENTS = new Set(["run.succeeded", "run.failed", "run.cancelled", "run.timed_out"]);
const TERMINAL = ["succeeded", "failed", "cancelled", "timed_out"];

let stack: RunningStack;
let receiver: Receiver;
let client: Client;
let other: Client;
let canceller: Client;
let idem: Client;
let behind: Behind;

beforeAll(async () => {
  [stack, receiver] = await startTogether(
    // A heartbeat a second: a stream on a run that waits for a person writes nothing else, and its
    // handler sees a client that left only at its next write (10 s apart by default).
    startStack({ OFFLINE_MODEL_LATENCY_MS: "800", MAX_ACTIVE_RUNS_PER_TENANT: "2", STREAM_HEARTBEAT_MS: "1000" }, [
      "other",
      "cancel",
      "idem",
      "streams",
      "streams2",
    ]),
    Receiver.start(),
  );
  client = new Client(stack.url, stack.apiKey);
  other = new Client(stack.url, stack.keys.other!);
  canceller = new Client(stack.url, stack.keys.cancel!);
  idem = new Client(stack.url, stack.keys.idem!);
  behind = new Behind(stack.endpoints!);
});

afterAll(async () => {
  behind?.destroy();
  await Promise.all([stack?.stop(), receiver?.close()]);
});

/** Polls the event log until `done(events)` holds. */
async function waitForEvents(on: Client, runId: string, done: (events: RunEvent[]) => boolean, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await on.allEvents(runId);
    if (done(events)) return events;
    if (Date.now() > deadline)
      throw new Error(`run ${runId}: no ${what} after ${timeoutMs} ms; log: ${events.map((e) => e.type).join(" ")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Polls until `check()` returns something other than undefined. */
async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function cancelIfGoing(on: Client, runId: string) {
  const run = await on.run(runId);
  if (!TERMINAL.includes(run.status)) await on.request("POST", `/v1/runs/${runId}/cancel`);
}

// --------------------------------------------------------------------------------------------- cancel

// A cancel refused (a run that has ended → 409, an unknown or another tenant's run → 404, nothing
// changed) is checked over the in-memory ports in test/unit/functions/api/cancel.test.ts; the 409
// after a cancel mid-run is shown here.
describe("cancel", () => {
  let cancelledMidRun: string | undefined;

  it("mid-run: 202, the run ends cancelled with run.cancelled last (the stream ends with it), the execution is aborted, a run.cancelled webhook arrives; again → 409", async () => {
    const endpoint = receiver.endpoint(scripts.ok());
    const { runId } = await canceller.submit({ ...REPORT, webhook: { url: endpoint.url } });
    const streaming = canceller.stream(runId);
    // Mid-run: the plan is made and executors are at work.
    await waitForEvents(canceller, runId, (events) => events.some((e) => e.type === "task.started"), "task.started");
    expect(TERMINAL).not.toContain((await canceller.run(runId)).status);

    const res = await canceller.request("POST", `/v1/runs/${runId}/cancel`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    cancelledMidRun = runId;
    expect(res.body).toEqual({ runId, status: "cancelled" });

    const { run, events } = await canceller.waitForEnd(runId);
    expect(run.status).toBe("cancelled");
    expect(run.error).toMatchObject({ code: "cancelled" });
    expect(events.filter((e) => TERMINAL_EVENTS.has(e.type)).map((e) => e.type)).toEqual(["run.cancelled"]);
    expect(events.at(-1)!.type).toBe("run.cancelled");
    expect(events.some((e) => e.type === "run.succeeded")).toBe(false);

    // The live stream closed after run.cancelled, having sent the whole log in order.
    const stream = await streaming;
    expect(stream.status).toBe(200);
    expect(stream.closed).toBe(true);
    expect(stream.frames.at(-1)!.event).toBe("run.cancelled");
    expect(eventsOf(stream.frames)).toEqual(events);

    // Step Functions' execution was stopped.
    const execution = await eventually(async () => {
      const e = await behind.execution(runId);
      return e.status === "RUNNING" ? undefined : e;
    }, "execution end");
    expect(execution.status).toBe("ABORTED");

    // A run.cancelled webhook, signed, from the status change.
    const hook = await endpoint.waitForRequest((r) => JSON.parse(r.body).type === "run.cancelled");
    expect(hook.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(JSON.parse(hook.body).data).toMatchObject({ runId, status: "cancelled", error: { code: "cancelled" } });
    expect(endpoint.bodies().map((b) => b.type)).toEqual(["run.cancelled"]);

    const again = await canceller.request<ErrorBody>("POST", `/v1/runs/${runId}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "conflict", message: expect.stringContaining("cancelled") });
    // Nothing changed: still one terminal event.
    const after = await canceller.allEvents(runId);
    expect(after.filter((e) => TERMINAL_EVENTS.has(e.type))).toHaveLength(1);
  }, 60_000);

  // The two watches below are windows of absence: they run side by side (each on its own run).
  it.concurrent("nothing happens in a run after it was cancelled mid-run: no event after run.cancelled", async ({ expect }) => {
    const runId = cancelledMidRun;
    if (!runId) throw new Error("the mid-run cancel test did not get as far as cancelling");
    // Steps that were in flight when the run was cancelled may still be finishing a model or tool call (Step Functions does not stop a running
    // Lambda): watch the log for longer than such a step takes (a few 800 ms model calls) — an
    // absence can only be checked over a window — and it must still end with run.cancelled.
    const watchUntil = Date.now() + 4_000;
    while (Date.now() < watchUntil) {
      const now = await canceller.allEvents(runId);
      const terminalAt = now.findIndex((e) => TERMINAL_EVENTS.has(e.type));
      expect(
        now.slice(terminalAt + 1).map((e) => `${e.seq}:${e.type}`),
        "events after run.cancelled",
      ).toEqual([]);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await canceller.run(runId)).status).toBe("cancelled");
  });

  // The executor checks that its run still goes before a call with effects (the loop's unit test
  // "stops without running the tools when the run ends (a cancel) while the model is thinking" shows
  // it without timing). Here, end to end: the cancel usually lands during the write step's 800 ms model
  // call; under heavy load the call may be made first, and then it was made before the cancel. Either
  // way no write starts after run.cancelled, and a file exists only if its write started before.
  it.concurrent("no side effect after a cancel: cancelled as the write step starts, write_artifact never starts after run.cancelled", async ({
    expect,
  }) => {
    const { runId } = await canceller.submit(REPORT);
    // The second plan step ("Write the report") has started: its executor is asking the model
    // (800 ms) before it calls write_artifact. Cancel now.
    await waitForEvents(
      canceller,
      runId,
      (events) => events.some((e) => e.type === "task.started" && e.data.iteration === 1),
      "step 2's task.started",
      45_000,
    );
    expect((await canceller.request("POST", `/v1/runs/${runId}/cancel`)).status).toBe(202);
    const cancelled = await waitForEvents(canceller, runId, (events) => events.some((e) => e.type === "run.cancelled"), "run.cancelled");
    const cancelledAt = cancelled.find((e) => e.type === "run.cancelled")!.seq;
    // Watched over a window longer than the executor's model call and tool call (see above).
    const watchUntil = Date.now() + 4_000;
    while (Date.now() < watchUntil) {
      const events = await canceller.allEvents(runId);
      const writesCalled = events.filter((e) => e.type === "tool.called" && e.data.tool === "write_artifact");
      expect(
        writesCalled.filter((e) => e.seq > cancelledAt).map((e) => `${e.seq}:${e.type}`),
        "write_artifact started after the cancel",
      ).toEqual([]);
      if (writesCalled.length === 0) expect((await canceller.run(runId)).files).toEqual([]);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 60_000);

  it("a run waiting for a person can be cancelled: its interrupt is closed", async () => {
    const { runId } = await canceller.submit({ ...REPORT, approval: { plan: true } });
    const { pending } = await canceller.waitForPending(runId, 1);
    expect((await canceller.request("POST", `/v1/runs/${runId}/cancel`)).status).toBe(202);
    const { run } = await canceller.waitForEnd(runId);
    expect(run.status).toBe("cancelled");
    expect(run.pendingInterrupts).toEqual([]);
    expect(run.interrupts.find((i: any) => i.interruptId === pending[0].interruptId)!.status).toBe("cancelled");
    const late = await canceller.decide(runId, pending[0].interruptId, { decision: "approve" });
    expect(late.status).toBe(409);
  }, 60_000);
});

// --------------------------------------------------------------------------------------------- idempotency

describe("idempotent submit", () => {
  /** Accepted (202, a CreateRunResponse) or refused (an ErrorBody): each test reads the one its status says. */
  const post = (body: unknown, key?: string) =>
    idem.request<CreateRunResponse & ErrorBody>("POST", "/v1/runs", body, key === undefined ? {} : { "idempotency-key": key });
  const created: string[] = [];

  afterAll(async () => {
    for (const runId of created) await cancelIfGoing(idem, runId);
  });

  it("same key + same body → the same run (202, replayed); same key + another body → 409; another key → a new run", async () => {
    const key = `order-${Date.now()}`;
    const first = await post(SIMPLE, key);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const runId = first.body.runId;
    created.push(runId);

    const second = await post(SIMPLE, key);
    expect(second.status).toBe(202);
    expect(second.body.runId).toBe(runId);
    expect(second.body.sessionId).toBe(first.body.sessionId);
    expect(second.body.links).toEqual(first.body.links);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.headers.get("location")).toBe(first.headers.get("location"));
    expect(await behind.runIds("idem")).toEqual([runId]);

    const conflict = await post({ ...SIMPLE, input: "What is 3+3?" }, key);
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: "conflict", message: expect.stringMatching(/Idempotency-Key/) });
    expect(await behind.runIds("idem")).toEqual([runId]);

    const fresh = await post(SIMPLE, `${key}-2`);
    expect(fresh.status).toBe(202);
    expect(fresh.body.runId).not.toBe(runId);
    created.push(fresh.body.runId);
    expect(await behind.runIds("idem")).toEqual([runId, fresh.body.runId].sort());

    // At the tenant's limit (2 runs going), a replay still answers with the run, not 429.
    const atLimit = await post(SIMPLE, key);
    expect(atLimit.status).toBe(202);
    expect(atLimit.body.runId).toBe(runId);

    // After the run ended, a replay reports the run as it is now.
    await idem.waitForEnd(runId);
    const later = await post(SIMPLE, key);
    expect(later.status).toBe(202);
    expect(later.body).toMatchObject({ runId, status: (await idem.run(runId)).status });
    expect(await behind.runIds("idem")).toEqual([runId, fresh.body.runId].sort());
  }, 60_000);

  it.each([
    ["300 characters", "k".repeat(300)],
    ["a space", "has space"],
    ["non-ASCII", "clé-ü"],
  ])("a bad Idempotency-Key (%s) → 400, and nothing is created", async (_what, key) => {
    const before = await behind.runIds("idem");
    const res = await post(SIMPLE, key);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: expect.any(String), message: expect.stringContaining("Idempotency-Key") });
    expect(await behind.runIds("idem")).toEqual(before);
  });

  it("concurrent submissions with one key create one run", async () => {
    for (const runId of created) await cancelIfGoing(idem, runId);
    const before = await behind.runIds("idem");
    const key = `race-${Date.now()}`;
    const answers = await Promise.all([post(SIMPLE, key), post(SIMPLE, key), post(SIMPLE, key)]);
    const accepted = answers.filter((a) => a.status === 202);
    // A request that finds the key claimed before the run is recorded is told to retry (409).
    expect(
      answers.every((a) => a.status === 202 || (a.status === 409 && /retry/i.test(a.body.error.message))),
      JSON.stringify(answers.map((a) => a.body)),
    ).toBe(true);
    expect(accepted.length).toBeGreaterThan(0);
    expect(new Set(accepted.map((a) => a.body.runId)).size).toBe(1);
    created.push(accepted[0]!.body.runId);
    const after = await behind.runIds("idem");
    expect(after.filter((id) => !before.includes(id))).toEqual([accepted[0]!.body.runId]);
  });
});

// --------------------------------------------------------------------------------------------- backpressure

describe("429 when a tenant has MAX_ACTIVE_RUNS_PER_TENANT runs going", () => {
  /** A run that holds its slot until a person decides: it waits for plan approval (a one-task plan, short once approved). */
  const HELD = { input: 'use calculator {"expression": "17*23"}', mode: "plan_solve", approval: { plan: true } } as const;
  const mine: string[] = [];

  afterAll(async () => {
    for (const runId of mine) await cancelIfGoing(client, runId);
  });

  it("the third submission gets 429 with Retry-After and a JSON error, and creates nothing; other tenants are not affected", async () => {
    for (let i = 0; i < 2; i++) {
      const { runId } = await client.submit(HELD);
      mine.push(runId);
    }
    // Both are going (waiting for a person): they hold their slots.
    for (const runId of mine) await client.waitForPending(runId, 1);
    const before = await behind.runIds("local");

    const refused = await client.request("POST", "/v1/runs", SIMPLE, { "idempotency-key": "third-attempt" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
    expect(refused.body).toEqual({ error: { code: "too_many_runs", message: expect.stringMatching(/2 runs/), details: { limit: 2 } } });
    expect(await behind.runIds("local")).toEqual(before);

    // Another tenant's runs are counted apart.
    const theirs = await other.request<CreateRunResponse>("POST", "/v1/runs", SIMPLE);
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(202);
    await other.waitForEnd(theirs.body.runId);
    expect(await behind.runIds("local")).toEqual(before);
  }, 60_000);

  it("after a run ends, a new submission is accepted; at the limit again, after a cancel too", async () => {
    // One held run is approved and ends by itself: its slot comes back.
    const [first, second] = mine as [string, string];
    const { pending } = await client.waitForPending(first, 1);
    expect((await client.decide(first, pending[0].interruptId, { decision: "approve" })).status).toBe(202);
    const ended = await client.waitForEnd(first, 60_000);
    expect(ended.run.status).toBe("succeeded");

    // The refused request's Idempotency-Key was not kept: reusing it starts a new run (not a replay).
    const accepted = await client.request<CreateRunResponse>("POST", "/v1/runs", SIMPLE, { "idempotency-key": "third-attempt" });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    expect(accepted.headers.get("idempotent-replayed")).toBeNull();
    mine.push(accepted.body.runId);
    expect((await client.waitForEnd(accepted.body.runId)).run.status).toBe("succeeded");
    // Back at the limit: `second` and `held` are going (both wait for a person).
    const { runId: held } = await client.submit(HELD);
    mine.push(held);
    await client.waitForPending(held, 1);
    expect((await client.run(second)).status).toBe("awaiting_input");
    expect((await client.request("POST", "/v1/runs", SIMPLE)).status).toBe(429);

    // A cancel gives its slot back at once.
    expect((await client.request("POST", `/v1/runs/${second}/cancel`)).status).toBe(202);
    const afterCancel = await client.request<CreateRunResponse>("POST", "/v1/runs", SIMPLE);
    expect(afterCancel.status, JSON.stringify(afterCancel.body)).toBe(202);
    mine.push(afterCancel.body.runId);
  }, 90_000);
});

// --------------------------------------------------------------------------------------------- stream lifetime

describe("stream lifetime", () => {
  it("a client that drops the stream stops its handler at once (logged: stream ended, client disconnected)", async () => {
    const { runId } = await client.submit(SIMPLE);
    const controller = new AbortController();
    const res = await fetch(`${stack.url}/v1/runs/${runId}/stream`, {
      headers: { authorization: `Bearer ${stack.apiKey}` },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\nid: ") && !text.startsWith("id: ")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before its first event: ${text}`);
      text += value;
    }
    const droppedAt = Date.now();
    controller.abort();
    await reader.cancel().catch(() => undefined);

    const ended = await eventually(() => logLines(stack, "stream ended").find((l) => l.runId === runId), "'stream ended' log line", 60_000);
    expect(ended).toMatchObject({ message: "stream ended", runId, reason: "client disconnected" });
    // It stopped because the client went, not at the 300 s limit (bounds with room for a busy machine).
    expect(Date.now() - droppedAt).toBeLessThan(60_000);
    expect(ended.seconds).toBeLessThan(120);
    expect(logLines(stack, "stream ended").filter((l) => l.runId === runId)).toHaveLength(1);
    await client.waitForEnd(runId);
  }, 60_000);

  it("clients that leave while their stream is still opening (key checked, run read) leave the stack serving", async () => {
    const { runId } = await client.submit(SIMPLE);
    // Each request is dropped 0 to 7 ms after it is sent: most before the handler has begun to write.
    for (let i = 0; i < 40; i++) {
      const controller = new AbortController();
      const request = fetch(`${stack.url}/v1/runs/${runId}/stream`, {
        headers: { authorization: `Bearer ${stack.apiKey}` },
        signal: controller.signal,
      }).then(
        (res) => res.body?.cancel(),
        () => undefined,
      );
      setTimeout(() => controller.abort(), i % 8);
      await request;
    }
    // The stack still answers, and the run still ends.
    expect((await fetch(`${stack.url}/health`)).status).toBe(200);
    expect(TERMINAL).toContain((await client.waitForEnd(runId)).run.status);
  }, 60_000);
});

// --------------------------------------------------------------------------------------------- open streams

describe("a tenant's open streams are capped (maxOpenStreams): 429 too_many_streams at every long-held door", () => {
  const HELD = { input: 'use calculator {"expression": "17*23"}', mode: "plan_solve", approval: { plan: true } } as const;
  const opened: AbortController[] = [];
  const runs: { on: Client; runId: string }[] = [];

  afterAll(async () => {
    for (const controller of opened) controller.abort();
    for (const { on, runId } of runs) await cancelIfGoing(on, runId);
  });

  /** Opens the run's stream and reads until its first event: the stream is then held open (the run waits for a person). */
  async function openStream(
    key: string,
    runId: string,
  ): Promise<{ status: number; close: () => void; body: unknown; retryAfter: string | null }> {
    const controller = new AbortController();
    opened.push(controller);
    const res = await fetch(`${stack.url}/v1/runs/${runId}/stream`, {
      headers: { authorization: `Bearer ${key}` },
      signal: controller.signal,
    });
    if (res.status !== 200)
      return { status: res.status, close: () => controller.abort(), body: await res.json(), retryAfter: res.headers.get("retry-after") };
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!/(^|\n)id: /.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before its first event: ${text}`);
      text += value;
    }
    return { status: 200, close: () => controller.abort(), body: undefined, retryAfter: null };
  }

  it("open streams up to the cap, the next (SSE, AG-UI, A2A) gets 429 and starts nothing; closing one frees a place; another tenant is unaffected", async () => {
    const key = stack.keys.streams!;
    const mine = new Client(stack.url, key);
    // A tenant may lower its cap, not raise it over the deployment's (20 here).
    expect((await mine.request("PUT", "/v1/settings", { maxOpenStreams: 21 })).status).toBe(400);
    expect((await mine.request("PUT", "/v1/settings", { maxOpenStreams: 2 })).status).toBe(200);
    const { runId } = await mine.submit(HELD);
    runs.push({ on: mine, runId });
    await mine.waitForPending(runId, 1);

    const first = await openStream(key, runId);
    const second = await openStream(key, runId);
    expect([first.status, second.status]).toEqual([200, 200]);
    const before = await behind.runIds("streams");

    const refused = await openStream(key, runId);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toMatch(/^[1-9]\d*$/);
    expect(refused.body).toEqual({
      error: { code: "too_many_streams", message: expect.stringMatching(/2 streams open/), details: { limit: 2, retryAfterSeconds: 5 } },
    });
    const agUi = await mine.request("POST", "/v1/ag-ui", {
      threadId: "t-cap",
      runId: "r-cap",
      messages: [{ id: "m1", role: "user", content: "What is 2+2?" }],
      tools: [],
      context: [],
      state: {},
      forwardedProps: {},
    });
    expect({ status: agUi.status, code: (agUi.body as ErrorBody).error?.code }).toEqual({ status: 429, code: "too_many_streams" });
    const a2a = await mine.request(
      "POST",
      "/a2a",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "SendStreamingMessage",
        params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "What is 2+2?" }] } },
      },
      { "a2a-version": "1.0" },
    );
    expect(a2a.status).toBe(429);
    expect(JSON.stringify(a2a.body)).toContain("too_many_streams");
    expect(await behind.runIds("streams")).toEqual(before);

    // Another tenant's streams are counted apart.
    const theirs = new Client(stack.url, stack.keys.streams2!);
    const { runId: theirRun } = await theirs.submit(HELD);
    runs.push({ on: theirs, runId: theirRun });
    await theirs.waitForPending(theirRun, 1);
    expect((await openStream(stack.keys.streams2!, theirRun)).status).toBe(200);

    // A client that leaves gives its place back (when its connection is seen to close).
    first.close();
    const again = await eventually(
      async () => {
        const attempt = await openStream(key, runId);
        return attempt.status === 200 ? attempt : undefined;
      },
      "a stream accepted after one was closed",
      30_000,
    );
    expect(again.status).toBe(200);
    expect((await openStream(key, runId)).status).toBe(429);
  }, 90_000);
});
