import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { StepwiseClient } from "../../../../shared/apiClient/client.js";
import { ApiError, apiError, ConnectionError } from "../../../../shared/apiClient/errors.js";
import type { RunEvent } from "../../../../shared/contracts/events.js";
import { sseFrame } from "../../../../shared/protocols/sse.js";
import { calculatorRunEvents } from "../../../support/sampleRun.js";

const sampleEvents = calculatorRunEvents();

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())).finally(() => (server = undefined)));

/** A real HTTP server on a free port → its URL. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer(handle);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const got: RunEvent[] = [];
  for await (const event of events) got.push(event);
  return got;
}

describe("apiError", () => {
  it("takes the code, message and details of the API's error body", () => {
    const error = apiError(
      409,
      JSON.stringify({ error: { code: "session_busy", message: "The session has a run in flight.", details: { activeRunId: "run_1" } } }),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 409,
      code: "session_busy",
      message: "The session has a run in flight.",
      details: { activeRunId: "run_1" },
      isAuth: false,
    });
  });

  it("says what came instead when the body is not the API's (a proxy's page, storage's XML)", () => {
    expect(apiError(502, "<html>Bad gateway</html>")).toMatchObject({
      status: 502,
      code: "http_502",
      message: "HTTP 502: <html>Bad gateway</html>",
    });
    expect(apiError(500, "")).toMatchObject({ code: "http_500", message: "HTTP 500" });
    expect(apiError(400, JSON.stringify({ error: { code: 7 } }))).toMatchObject({
      code: "http_400",
      message: expect.stringContaining("HTTP 400"),
    });
    expect(apiError(401, "{}").isAuth).toBe(true);
    expect(apiError(403, "{}").isAuth).toBe(true);
  });
});

describe("StepwiseClient requests", () => {
  it("sends the key and JSON, and turns an error answer into an ApiError with the API's code", async () => {
    const seen: { method?: string; url?: string; authorization?: string; type?: string; body: string }[] = [];
    const url = await serve(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization, type: req.headers["content-type"], body });
      if (req.url === "/v1/runs") {
        res
          .writeHead(202, { "content-type": "application/json" })
          .end(JSON.stringify({ runId: "run_1", sessionId: "ses_1", status: "queued", links: {} }));
      } else {
        res
          .writeHead(404, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { code: "not_found", message: "No run with id run_x." } }));
      }
    });
    const client = new StepwiseClient(`${url}/`, "sk_1");
    expect(await client.createRun({ input: "Hello", mode: "react" })).toMatchObject({ runId: "run_1" });
    await expect(client.getRun("run_x")).rejects.toMatchObject({
      name: "ApiError",
      status: 404,
      code: "not_found",
      message: "No run with id run_x.",
    });
    expect(seen).toEqual([
      { method: "POST", url: "/v1/runs", authorization: "Bearer sk_1", type: "application/json", body: '{"input":"Hello","mode":"react"}' },
      { method: "GET", url: "/v1/runs/run_x", authorization: "Bearer sk_1", type: undefined, body: "" },
    ]);
  });

  it("reads the key at each request when given a function (signing out takes effect at once)", async () => {
    const keys: (string | undefined)[] = [];
    const url = await serve((req, res) => {
      keys.push(req.headers.authorization);
      res.writeHead(200, { "content-type": "application/json" }).end('{"runs":[],"nextCursor":null}');
    });
    let key: string | null = "sk_a";
    const client = new StepwiseClient(url, () => key);
    await client.listRuns({ limit: 1 });
    key = null;
    await client.listRuns({ status: "running", sessionId: "", cursor: "c1" });
    expect(keys).toEqual(["Bearer sk_a", undefined]);
  });

  it("uploads a small file's bytes with its name and type", async () => {
    const seen: { url?: string; type?: string; body: string }[] = [];
    const url = await serve(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      seen.push({ url: req.url, type: req.headers["content-type"], body });
      res
        .writeHead(201, { "content-type": "application/json" })
        .end(JSON.stringify({ fileId: "file_1", name: "a b.csv", contentType: "text/csv", bytes: 4 }));
    });
    const client = new StepwiseClient(url, "k");
    expect(await client.uploadFile("a b.csv", new Blob(["x,y\n"]), "text/csv")).toMatchObject({ fileId: "file_1" });
    await client.uploadFile("raw.bin", new Uint8Array([1, 2]));
    expect(seen).toEqual([
      { url: "/v1/files?name=a%20b.csv", type: "text/csv", body: "x,y\n" },
      { url: "/v1/files?name=raw.bin", type: "application/octet-stream", body: "\u0001\u0002" },
    ]);
  });

  it("an unreachable API, or an answer that is not JSON, is a ConnectionError; an empty answer is undefined", async () => {
    const url = await serve((req, res) => {
      if (req.url === "/v1/runs/run_1/cancel") res.writeHead(204).end();
      else res.writeHead(200, { "content-type": "text/html" }).end("<html>a router's login page</html>");
    });
    const client = new StepwiseClient(url, "k");
    expect(await client.cancelRun("run_1")).toBeUndefined();
    await expect(client.getRun("run_1")).rejects.toSatisfy(
      (e) => e instanceof ConnectionError && /not JSON; is http:\/\/127\.0\.0\.1:\d+ a Stepwise API/.test(e.message),
    );
    // A port nobody listens on any more.
    server!.closeAllConnections();
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    const closed = await serve(() => undefined);
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    await expect(new StepwiseClient(closed, "k").getRun("run_1")).rejects.toSatisfy(
      (e) => e instanceof ConnectionError && e.message === `Could not reach the Stepwise API at ${closed} (ECONNREFUSED).`,
    );
  });
});

describe("StepwiseClient.follow", () => {
  it("reconnects with Last-Event-ID after the server ends the stream or the connection breaks, until the terminal event", async () => {
    const seen: IncomingMessage["headers"][] = [];
    const url = await serve((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { "content-type": "text/event-stream" });
      switch (seen.length) {
        case 1: // retry, two events, then the server's time limit
          res.end(`retry: 20\n\n${sseFrame(sampleEvents[0]!)}${sseFrame(sampleEvents[1]!)}: stream time limit reached\n\n`);
          break;
        case 2: // one event, then the connection dies in the middle of a frame
          res.write(sseFrame(sampleEvents[2]!));
          res.write("id: 4\nevent: run.succ");
          setTimeout(() => res.socket?.destroy(), 20);
          break;
        default: // an event sent again (at or below the last one seen) is dropped
          res.end(sseFrame(sampleEvents[2]!) + sseFrame(sampleEvents[3]!));
      }
    });
    const reconnects: { reason: string; delayMs: number; attempt: number }[] = [];
    let opened = 0;
    const got = await collect(
      new StepwiseClient(url, "sk_test").follow("run_1", {
        onOpen: () => opened++,
        onReconnect: ({ reason, delayMs, attempt }) => reconnects.push({ reason, delayMs, attempt }),
      }),
    );
    expect(got).toEqual(sampleEvents);
    expect(seen.map((h) => h["last-event-id"])).toEqual([undefined, "2", "3"]);
    expect(seen.every((h) => h.authorization === "Bearer sk_test" && h.accept === "text/event-stream")).toBe(true);
    expect(opened).toBe(3);
    // The server's retry (20 ms) is the delay; a broken connection counts as a failed attempt.
    expect(reconnects).toEqual([
      { reason: "the server ended the stream", delayMs: 20, attempt: 0 },
      { reason: expect.stringContaining("the connection broke"), delayMs: 20, attempt: 1 },
    ]);
  });

  it("starts after the given sequence number, and a 401 is an ApiError, not a reconnection", async () => {
    const seen: IncomingMessage["headers"][] = [];
    const url = await serve((req, res) => {
      seen.push(req.headers);
      if (req.headers.authorization !== "Bearer good") {
        res
          .writeHead(401, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { code: "unauthorized", message: "The API key is not valid." } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" }).end(sseFrame(sampleEvents[3]!));
    });
    expect((await collect(new StepwiseClient(url, "good").follow("run_1", { after: 3 }))).map((e) => e.seq)).toEqual([4]);
    expect(seen[0]!["last-event-id"]).toBe("3");

    const failing = collect(new StepwiseClient(url, "bad").follow("run_1"));
    await expect(failing).rejects.toBeInstanceOf(ApiError);
    await expect(failing).rejects.toMatchObject({ status: 401, code: "unauthorized", isAuth: true });
    expect(seen).toHaveLength(2);
  });

  it("with stream tokens (the console): a new token per connection in the URL, the key only in the token request", async () => {
    const requests: { method?: string; url: URL; authorization?: string; lastEventId?: string }[] = [];
    let tokens = 0;
    const url = await serve((req, res) => {
      const target = new URL(req.url!, "http://x");
      requests.push({
        method: req.method,
        url: target,
        authorization: req.headers.authorization,
        lastEventId: req.headers["last-event-id"] as string | undefined,
      });
      if (target.pathname === "/v1/runs/run_1/stream-token") {
        res
          .writeHead(201, { "content-type": "application/json" })
          .end(JSON.stringify({ token: `st_${++tokens}`, expiresAt: "2026-01-01T00:05:00.000Z" }));
        return;
      }
      // The first connection ends after two events (its token then expires); the second finishes.
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        target.searchParams.get("token") === "st_1"
          ? `retry: 10\n\n${sampleEvents.slice(0, 2).map(sseFrame).join("")}`
          : sampleEvents.slice(2).map(sseFrame).join(""),
      );
    });
    const client = new StepwiseClient(url, "sk_secret", { streamAuth: "token" });
    expect(await collect(client.follow("run_1", { streamUrl: `${url}/v1/runs/run_1/stream` }))).toEqual(sampleEvents);
    const streams = requests.filter((r) => r.url.pathname.endsWith("/stream"));
    expect(streams.map((r) => [r.url.searchParams.get("token"), r.lastEventId ?? null, r.authorization ?? null])).toEqual([
      ["st_1", null, null],
      ["st_2", "2", null],
    ]);
    expect(
      requests
        .filter((r) => r.url.pathname.endsWith("/stream-token"))
        .every((r) => r.method === "POST" && r.authorization === "Bearer sk_secret"),
    ).toBe(true);
    expect(requests.some((r) => r.url.href.includes("sk_secret"))).toBe(false);
  });

  it("ends when the run ended without a terminal event, and gives up after the allowed failures", async () => {
    let streams = 0;
    let run2Streams = 0;
    const url = await serve((req, res) => {
      if (req.url === "/v1/runs/run_1") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ runId: "run_1", status: "failed" }));
      } else if (req.url === "/v1/runs/run_1/stream") {
        streams++;
        res.writeHead(200, { "content-type": "text/event-stream" }).end("retry: 5\n\n");
      } else if (req.url === "/v1/runs/run_2/stream" && ++run2Streams === 1) {
        // One event, then the service fails for good.
        res.writeHead(200, { "content-type": "text/event-stream" }).end(`retry: 5\n\n${sseFrame(sampleEvents[0]!)}`);
      } else {
        res
          .writeHead(503, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { code: "unavailable", message: "Try again." } }));
      }
    });
    const client = new StepwiseClient(url, "k");
    expect(await collect(client.follow("run_1"))).toEqual([]);
    expect(streams).toBe(1);

    const attempts: number[] = [];
    const failing = collect(client.follow("run_2", { maxFailures: 2, onReconnect: ({ attempt }) => attempts.push(attempt) }));
    await expect(failing).rejects.toSatisfy((e) => e instanceof ConnectionError && e.message.includes("503 Try again."));
    expect(attempts).toEqual([0, 1, 2]);
  });
});

describe("a run's tasks past its view", () => {
  it("allTasks reads the pages after the view's; taskResult fetches a long result from its link, without the key", async () => {
    const seen: { url: string; auth?: string }[] = [];
    const task = (taskId: string) => ({ taskId, title: taskId, result: "…", resultCut: true });
    const url = await serve((req, res) => {
      seen.push({ url: req.url ?? "", auth: req.headers.authorization });
      const json = (body: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (req.url === "/v1/runs/run_1/tasks?cursor=c1")
        return json({ runId: "run_1", tasks: [task("s1.t2")], taskCount: 3, nextCursor: "c2" });
      if (req.url === "/v1/runs/run_1/tasks?cursor=c2")
        return json({ runId: "run_1", tasks: [task("s1.t3")], taskCount: 3, nextCursor: null });
      if (req.url === "/v1/runs/run_1/tasks/s1.t2/result")
        return json({ taskId: "s1.t2", bytes: 9, url: `http://${req.headers.host}/bucket/r.md?sig=1` });
      if (req.url === "/bucket/r.md?sig=1") return res.writeHead(200, { "content-type": "text/markdown" }).end("长长长");
      res.writeHead(404).end();
    });
    const client = new StepwiseClient(url, "sk_test");
    const all = await client.allTasks({ runId: "run_1", tasks: [task("s1.t1")] as never, nextTasksCursor: "c1" });
    expect(all.map((t) => t.taskId)).toEqual(["s1.t1", "s1.t2", "s1.t3"]);
    expect(await client.taskResult("run_1", "s1.t2")).toBe("长长长");
    // The link is signed for storage: the API key never goes to it.
    expect(seen.find((s) => s.url.startsWith("/bucket/"))?.auth).toBeUndefined();
    expect(seen.find((s) => s.url.endsWith("/result"))?.auth).toBe("Bearer sk_test");
  });
});
