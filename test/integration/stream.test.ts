import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/contracts/events.js";
import { Client, eventsOf } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * The live stream (`GET /v1/runs/{id}/stream`): resume with Last-Event-ID or ?after= with no gap
 * and no duplicate, heartbeats while the run is quiet, errors as JSON. One stack with a slow model
 * (500 ms a call) and a fast heartbeat (200 ms), so a run has quiet stretches to watch.
 */
let stack: RunningStack;
let client: Client;

beforeAll(async () => {
  // The executors write from two containers (processes) at once, as on AWS.
  stack = await startStack({ STREAM_HEARTBEAT_MS: "200", OFFLINE_MODEL_LATENCY_MS: "500", STEPWISE_LOCAL_CONTAINERS: "2" });
  client = new Client(stack.url, stack.apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

describe("live stream of a plan_solve run", () => {
  let runId: string;
  let logged: RunEvent[];
  let viaHeader: { first: Awaited<ReturnType<Client["stream"]>>; rest: Awaited<ReturnType<Client["stream"]>> };
  let viaQuery: { first: Awaited<ReturnType<Client["stream"]>>; rest: Awaited<ReturnType<Client["stream"]>> };

  beforeAll(async () => {
    ({ runId } = await client.submit({ input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve" }));
    // Two clients follow the run live; each drops its connection after a few frames and resumes,
    // one with the Last-Event-ID header (what EventSource sends), one with ?after=.
    [viaHeader, viaQuery] = await Promise.all([
      (async () => {
        const first = await client.stream(runId, { stopAfter: 3 });
        const rest = await client.stream(runId, { lastEventId: first.frames.at(-1)!.id });
        return { first, rest };
      })(),
      (async () => {
        const first = await client.stream(runId, { stopAfter: 5 });
        const rest = await client.stream(runId, { after: first.frames.at(-1)!.id });
        return { first, rest };
      })(),
    ]);
    const { run, events } = await client.waitForEnd(runId);
    expect(run.status).toBe("succeeded");
    logged = events;
  }, 300_000);

  it("the first connections were cut before the end of the run", () => {
    expect(viaHeader.first.frames).toHaveLength(3);
    expect(viaHeader.first.closed).toBe(false);
    expect(viaQuery.first.frames).toHaveLength(5);
    expect(viaQuery.first.closed).toBe(false);
    expect(logged.length).toBeGreaterThan(5);
  });

  it("resuming with Last-Event-ID continues with no gap and no duplicate, to the end", () => {
    const frames = [...viaHeader.first.frames, ...viaHeader.rest.frames];
    expect(frames.map((f) => Number(f.id))).toEqual(logged.map((_, i) => i + 1));
    expect(eventsOf(frames)).toEqual(logged);
    expect(frames.map((f) => f.event)).toEqual(logged.map((e) => e.type));
    expect(viaHeader.rest.closed).toBe(true);
    expect(frames.at(-1)!.event).toBe("run.succeeded");
  });

  it("resuming with ?after= does the same", () => {
    const frames = [...viaQuery.first.frames, ...viaQuery.rest.frames];
    expect(frames.map((f) => Number(f.id))).toEqual(logged.map((_, i) => i + 1));
    expect(eventsOf(frames)).toEqual(logged);
    expect(viaQuery.rest.closed).toBe(true);
  });

  it("sends heartbeat comments while the run is quiet (between events, not only at the end)", () => {
    const items = viaHeader.rest.items;
    const lastFrame = items.findLastIndex((i) => i.kind === "frame");
    const firstFrame = items.findIndex((i) => i.kind === "frame");
    const heartbeats = items
      .map((item, index) => ({ item, index }))
      .filter(({ item }) => item.kind === "comment" && item.text === "heartbeat");
    expect(heartbeats.length).toBeGreaterThan(0);
    // at least one heartbeat came while the run was still going: after one event and before a later one
    expect(heartbeats.some(({ index }) => index > firstFrame && index < lastFrame)).toBe(true);
    // comments never carry data: the frames alone are the events
    expect(viaHeader.rest.frames.every((f) => f.id !== undefined && f.event !== undefined)).toBe(true);
  });

  it("a stream resumed after the terminal event closes without sending anything more", async () => {
    const after = await client.stream(runId, { lastEventId: String(logged.length) });
    expect(after.status).toBe(200);
    expect(after.frames).toEqual([]);
    expect(after.closed).toBe(true);
  });

  it("a resume from the middle of an ended run replays exactly the rest", async () => {
    const middle = Math.floor(logged.length / 2);
    const rest = await client.stream(runId, { lastEventId: String(middle) });
    expect(eventsOf(rest.frames)).toEqual(logged.slice(middle));
    const restByQuery = await client.stream(runId, { after: middle });
    expect(eventsOf(restByQuery.frames)).toEqual(logged.slice(middle));
  });
});

describe("stream errors", () => {
  let runId: string;
  beforeAll(async () => {
    ({ runId } = await client.submit({ input: "What is 2+2?", mode: "react" }));
  });

  it.each([["abc"], ["-1"], ["1.5"], ["1e3x"]])("a bad Last-Event-ID (%s) is a 400 with a JSON error", async (lastEventId) => {
    const res = await client.stream(runId, { lastEventId });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error: { code: expect.any(String), message: expect.stringContaining(lastEventId) } });
  });

  it("a bad ?after= is a 400 too", async () => {
    const res = await client.stream(runId, { after: "abc" });
    expect(res.status).toBe(400);
    expect(res.body?.error.code).toEqual(expect.any(String));
  });

  it("the stream of an unknown run is 404", async () => {
    const res = await client.stream("run_doesnotexist0000");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: "not_found", message: expect.any(String) } });
  });

  it("without an API key the stream is 401, with a wrong one too", async () => {
    for (const key of ["", "sk_wrong_key"]) {
      const res = await new Client(stack.url, key).stream(runId);
      expect(res.status, `key '${key}'`).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(res.body).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
    }
  });

  it("another tenant's run is 404 on the stream", async () => {
    const res = await new Client(stack.url, stack.keys.other!).stream(runId);
    expect(res.status).toBe(404);
  });
});
