import fc from "fast-check";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { Plan } from "../../shared/contracts/plan.js";
import { sseFrame } from "../../shared/run/sse.js";
import { ApiError, SseParser, StepwiseClient, type SseItem } from "../../infra/cli/client.js";
import { parseJsonObject, parseYesNo } from "../../infra/cli/approvals.js";
import { parseCommandLine, UsageError } from "../../infra/cli/args.js";
import { Renderer, useColor } from "../../infra/cli/render.js";

/** Feeds `chunks` to one parser and returns everything it produced. */
function parseChunks(chunks: (string | Uint8Array)[], parser = new SseParser()): SseItem[] {
  const items = chunks.flatMap((chunk) => parser.feed(chunk));
  return [...items, ...parser.end()];
}

/** `text` cut at the given positions. */
function splitAt(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => Math.max(0, Math.min(text.length, c))))].sort((a, b) => a - b);
  const parts: string[] = [];
  let start = 0;
  for (const point of points) {
    parts.push(text.slice(start, point));
    start = point;
  }
  parts.push(text.slice(start));
  return parts;
}

const events = (items: SseItem[]) => items.filter((i) => i.kind === "event");

const sampleEvents: RunEvent[] = [
  { type: "run.started", data: { mode: "plan_solve", input: "Compute 17*23" }, seq: 1, at: "2026-01-01T00:00:00.000Z" },
  { type: "tool.called", data: { agent: "executor", taskId: "t1", callId: "c1", tool: "calculator", arguments: { expression: "17*23" } }, seq: 2, at: "2026-01-01T00:00:01.000Z" },
  { type: "tool.result", data: { agent: "executor", taskId: "t1", callId: "c1", tool: "calculator", ok: true, output: "17*23 = 391" }, seq: 3, at: "2026-01-01T00:00:02.000Z" },
  { type: "run.succeeded", data: { result: "17*23 = 391 — ünïcødé ✓\nsecond line", files: [] }, seq: 4, at: "2026-01-01T00:00:03.000Z" },
];
/** A stream as the server writes it: retry first, frames, heartbeats between them. */
const serverStream = `retry: 1000\n\n${sampleEvents.map(sseFrame).join(": heartbeat\n\n")}`;
const expectedEvents = sampleEvents.map((e) => ({ kind: "event", type: e.type, data: JSON.stringify(e), lastEventId: String(e.seq) }));

describe("SseParser", () => {
  it("parses the server's frames: ids, event types, JSON data, comments and retry", () => {
    const items = parseChunks([serverStream]);
    expect(events(items)).toEqual(expectedEvents);
    expect(items.filter((i) => i.kind === "comment")).toEqual([
      { kind: "comment", text: "heartbeat" },
      { kind: "comment", text: "heartbeat" },
      { kind: "comment", text: "heartbeat" },
    ]);
    expect(items[0]).toEqual({ kind: "retry", ms: 1000 });
  });

  it("gives the same result whatever the chunking, with LF, CRLF or CR line ends", () => {
    for (const eol of ["\n", "\r\n", "\r"]) {
      const text = serverStream.replaceAll("\n", eol);
      const whole = parseChunks([text]);
      expect(events(whole)).toEqual(expectedEvents);
      fc.assert(
        fc.property(fc.array(fc.nat({ max: text.length }), { maxLength: 30 }), (cuts) => {
          expect(parseChunks(splitAt(text, cuts))).toEqual(whole);
        }),
        { numRuns: 300 },
      );
    }
  });

  it("handles every single cut position, including between the CR and LF of a CRLF", () => {
    const text = "id: 7\r\nevent: x\r\ndata: a\r\ndata: b\r\n\r\n: c\r\n\r\nid: 8\r\ndata: z\r\n\r\n";
    const whole = parseChunks([text]);
    expect(events(whole)).toEqual([
      { kind: "event", type: "x", data: "a\nb", lastEventId: "7" },
      { kind: "event", type: "message", data: "z", lastEventId: "8" },
    ]);
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        expect(parseChunks(splitAt(text, [i, j])), `cut at ${i} and ${j}`).toEqual(whole);
      }
    }
    // One character at a time, too.
    expect(parseChunks([...text])).toEqual(whole);
  });

  it("a CR at the end of a chunk ends the line at once (no waiting for a possible LF)", () => {
    const parser = new SseParser();
    expect(parser.feed("data: a\r")).toEqual([]);
    expect(parser.feed("\r")).toEqual([{ kind: "event", type: "message", data: "a", lastEventId: "" }]);
    // The LF opening the next chunk pairs with the CR that ended the previous one: no blank line.
    expect(parser.feed("\ndata: b\r")).toEqual([]);
    expect(parser.feed("\n\n")).toEqual([{ kind: "event", type: "message", data: "b", lastEventId: "" }]);
  });

  it("decodes UTF-8 split inside a character", () => {
    const bytes = new TextEncoder().encode(serverStream);
    const whole = parseChunks([bytes]);
    expect(events(whole)).toEqual(expectedEvents);
    fc.assert(
      fc.property(fc.array(fc.nat({ max: bytes.length }), { maxLength: 20 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let start = 0;
        for (const p of points) {
          chunks.push(bytes.subarray(start, p));
          start = p;
        }
        chunks.push(bytes.subarray(start));
        expect(parseChunks(chunks)).toEqual(whole);
      }),
      { numRuns: 200 },
    );
  });

  it("joins multi-line data with LF and keeps empty data lines", () => {
    expect(events(parseChunks(["data: first\ndata:\ndata:  indented\ndata\n\n"]))).toEqual([
      { kind: "event", type: "message", data: "first\n\n indented\n", lastEventId: "" },
    ]);
  });

  it("drops one space after the colon only, and takes a field with no colon as empty", () => {
    expect(events(parseChunks(["data:x\n\n", "data:  y\n\n", "event\ndata: z\n\n"]))).toEqual([
      { kind: "event", type: "message", data: "x", lastEventId: "" },
      { kind: "event", type: "message", data: " y", lastEventId: "" },
      { kind: "event", type: "message", data: "z", lastEventId: "" },
    ]);
  });

  it("comments never dispatch, and a block without data dispatches nothing", () => {
    const items = parseChunks([":\n: heartbeat\n:no space\n\nevent: lonely\n\n"]);
    expect(items).toEqual([
      { kind: "comment", text: "" },
      { kind: "comment", text: "heartbeat" },
      { kind: "comment", text: "no space" },
    ]);
  });

  it("the event type does not carry over to the next event", () => {
    expect(events(parseChunks(["event: a\ndata: 1\n\ndata: 2\n\n"])).map((e) => e.kind === "event" && e.type)).toEqual(["a", "message"]);
  });

  it("ids: kept for later events, set by blocks without data, reset by an empty id, ignored with NUL", () => {
    const parser = new SseParser();
    const items = parseChunks(["id: 1\ndata: a\n\n", "data: b\n\n", "id: 5\n\n", "id: 6\u0000x\ndata: c\n\n", "id\ndata: d\n\n"], parser);
    expect(events(items).map((e) => e.kind === "event" && [e.data, e.lastEventId])).toEqual([
      ["a", "1"],
      ["b", "1"],
      ["c", "5"],
      ["d", ""],
    ]);
    const other = new SseParser();
    other.feed("id: 9\n\n");
    expect(other.lastEventId).toBe("9");
  });

  it("starts from the last event id it is given (a reconnection)", () => {
    const parser = new SseParser("41");
    expect(parser.feed("data: x\n\n")).toEqual([{ kind: "event", type: "message", data: "x", lastEventId: "41" }]);
  });

  it("retry takes ASCII digits only", () => {
    const parser = new SseParser();
    const items = parseChunks(["retry: 2500\n", "retry: 2.5s\n", "retry: -1\n", "retry:\n", "retry: 300\n\n"], parser);
    expect(items).toEqual([
      { kind: "retry", ms: 2500 },
      { kind: "retry", ms: 300 },
    ]);
    expect(parser.retryMs).toBe(300);
  });

  it("drops a leading BOM, unknown fields, and an unterminated last block", () => {
    expect(parseChunks(["\ufeffdata: a\nfoo: bar\n\n", "data: cut off\n"])).toEqual([{ kind: "event", type: "message", data: "a", lastEventId: "" }]);
    // A BOM split from the rest still counts as the stream's first character.
    expect(parseChunks(["\ufeff", "data: b\n\n"])).toEqual([{ kind: "event", type: "message", data: "b", lastEventId: "" }]);
  });
});

describe("StepwiseClient.follow", () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  function frame(event: RunEvent) {
    return sseFrame(event);
  }

  it("reconnects with Last-Event-ID after the server ends the stream or the connection breaks, until the terminal event", async () => {
    const seen: IncomingHttpHeaders[] = [];
    server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { "content-type": "text/event-stream" });
      switch (seen.length) {
        case 1: // retry, two events, then the server's time limit
          res.end(`retry: 20\n\n${frame(sampleEvents[0]!)}${frame(sampleEvents[1]!)}: stream time limit reached\n\n`);
          break;
        case 2: // one event, then the connection dies in the middle of a frame
          res.write(frame(sampleEvents[2]!));
          res.write("id: 4\nevent: run.succ");
          setTimeout(() => res.socket?.destroy(), 20);
          break;
        default:
          res.end(frame(sampleEvents[3]!));
      }
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new StepwiseClient(url, "sk_test");
    const reconnects: { reason: string; delayMs: number; attempt: number }[] = [];
    const got: RunEvent[] = [];
    for await (const event of client.follow("run_1", { onReconnect: ({ reason, delayMs, attempt }) => reconnects.push({ reason, delayMs, attempt }) })) {
      got.push(event);
    }
    expect(got).toEqual(sampleEvents);
    expect(seen.map((h) => h["last-event-id"])).toEqual([undefined, "2", "3"]);
    expect(seen.every((h) => h.authorization === "Bearer sk_test" && h.accept === "text/event-stream")).toBe(true);
    // The server's retry (20 ms) is the delay; a broken connection counts as a failed attempt.
    expect(reconnects).toEqual([
      { reason: "the server ended the stream", delayMs: 20, attempt: 0 },
      { reason: expect.stringContaining("the connection broke"), delayMs: 20, attempt: 1 },
    ]);
  });

  it("starts after the given sequence number, and a 401 is an ApiError, not a reconnection", async () => {
    const seen: IncomingHttpHeaders[] = [];
    server = createServer((req, res) => {
      seen.push(req.headers);
      if (req.headers.authorization !== "Bearer good") {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "unauthorized", message: "The API key is not valid." } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(frame(sampleEvents[3]!));
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const got: RunEvent[] = [];
    for await (const event of new StepwiseClient(url, "good").follow("run_1", { after: 3 })) got.push(event);
    expect(got.map((e) => e.seq)).toEqual([4]);
    expect(seen[0]!["last-event-id"]).toBe("3");

    const failing = (async () => {
      for await (const _ of new StepwiseClient(url, "bad").follow("run_1")) {
        // nothing arrives
      }
    })();
    await expect(failing).rejects.toBeInstanceOf(ApiError);
    await expect(failing).rejects.toMatchObject({ status: 401, code: "unauthorized", isAuth: true });
    expect(seen).toHaveLength(2);
  });
});

const plan: Plan = {
  title: "Plan for: the facts",
  steps: [
    { title: "Gather the facts", tasks: ["Evaluate 17*23 with the calculator", "Evaluate (120/8)+2^5 with the calculator"], status: "completed" },
    { title: "Write the report", tasks: ["Write report.md"], status: "in_progress" },
    { title: "Proofread", tasks: ["Read it again"], status: "not_started" },
    { title: "Publish", tasks: ["Send it"], status: "blocked", notes: "waiting for a key" },
  ],
  finished: false,
};
const planEvent: RunEvent = { type: "plan.updated", data: { plan }, seq: 5, at: "2026-01-01T00:00:00.000Z" };

describe("Renderer", () => {
  it("a plan.updated event renders each step with its status marker, tasks the first time", () => {
    const renderer = new Renderer({ color: false });
    const lines = renderer.event(planEvent);
    expect(lines).toContain("Plan: Plan for: the facts");
    expect(lines).toContain("  [x] 1. Gather the facts");
    expect(lines).toContain("  [>] 2. Write the report");
    expect(lines).toContain("  [ ] 3. Proofread");
    expect(lines).toContain("  [!] 4. Publish");
    expect(lines.join("\n")).toContain("- Evaluate 17*23 with the calculator");
    expect(lines.join("\n")).toContain("notes: waiting for a key");
    expect(lines.join("\n")).not.toContain("\x1b[");
    // The same plan again (only statuses changed): steps without their tasks.
    const next = renderer.event({ ...planEvent, data: { plan: { ...plan, steps: plan.steps.map((s) => ({ ...s, status: "completed" as const })), finished: true } } });
    expect(next).toContain("  [x] 4. Publish");
    expect(next.join("\n")).not.toContain("Evaluate 17*23");
    expect(next.join("\n")).toContain("(finished)");
  });

  it("tasks, tool calls and results, thoughts, interrupts and the answer read as lines", () => {
    const renderer = new Renderer({ color: false });
    const at = "2026-01-01T00:00:00.000Z";
    const render = (event: Omit<RunEvent, "seq" | "at">) => renderer.event({ ...event, seq: 1, at } as RunEvent).join("\n");
    expect(render({ type: "task.started", data: { taskId: "t2", title: "Evaluate (120/8)+2^5", iteration: 0, stepIndex: 0 } })).toBe("▶ t2 started (step 1): Evaluate (120/8)+2^5");
    expect(render(sampleEvents[1]!)).toBe('  [t1] → calculator {"expression":"17*23"}');
    expect(render(sampleEvents[2]!)).toBe("  [t1] ← 17*23 = 391");
    expect(render({ type: "tool.called", data: { agent: "executor", taskId: "t2", callId: "c2", tool: "everything__add", arguments: { a: 2, b: 3 }, persona: "Financial analyst" } })).toBe(
      '  [t2] → everything__add (Financial analyst) {"a":2,"b":3}',
    );
    expect(render({ type: "tool_source.unavailable", data: { source: "crm", reason: "Its tools are left out of this run: HTTP 503" } })).toBe(
      "⚠ tool source crm unavailable: Its tools are left out of this run: HTTP 503",
    );
    expect(render({ type: "tool.result", data: { agent: "react", callId: "c", tool: "calculator", ok: false, output: "Error: division by zero" } })).toBe(
      "  [react] ✗ calculator: Error: division by zero",
    );
    expect(render({ type: "agent.thought", data: { agent: "planner", text: "Plan recorded." } })).toBe("  [planner] Plan recorded.");
    expect(render({ type: "task.completed", data: { taskId: "t1", title: "x", iteration: 0, status: "failed", result: "no tool fits" } })).toBe("✗ t1 failed: no tool fits");
    expect(
      render({ type: "interrupt.opened", data: { interruptId: "int_1", kind: "tool_approval", summary: "", taskId: "t1", toolName: "write_artifact", arguments: { filename: "a.md" } } }),
    ).toContain("? t1 wants to run write_artifact (int_1)\n    filename: a.md");
    expect(
      render({ type: "file.created", data: { name: "report.md", contentType: "text/markdown", bytes: 133, description: "Report", download: "/v1/runs/run_1/files/report.md" } }),
    ).toBe("  + file report.md (133 bytes, text/markdown)");
    expect(render({ type: "run.resumed", data: { redrive: false, reason: "Stepwise restarted" } })).toBe("Run resumed: Stepwise restarted.");
    expect(render({ type: "interrupt.resolved", data: { interruptId: "int_1", kind: "plan_approval", decision: "reject", message: "too long" } })).toBe(
      "✗ rejected (plan): too long",
    );
    expect(render(sampleEvents[3]!)).toContain("Answer:\n17*23 = 391 — ünïcødé ✓\nsecond line");
    expect(render({ type: "run.failed", data: { error: { code: "agent_error", message: "boom" } } })).toContain("✗ The run failed (agent_error): boom");
  });

  it("colours only when asked to, and never with NO_COLOR", () => {
    expect(new Renderer({ color: true }).event(planEvent).join("\n")).toContain("\x1b[");
    expect(useColor({ isTTY: true }, {})).toBe(true);
    expect(useColor({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(useColor({ isTTY: false }, {})).toBe(false);
    expect(useColor({}, {})).toBe(false);
  });
});

describe("command line", () => {
  it("run: the task and options become the request body; URL and key fall back to the environment", () => {
    const command = parseCommandLine(
      ["run", "Compute 17*23", "--mode", "plan_solve", "--deep-think", "--session", "ses_1", "--approve-plan", "--approve-tools", "write", "--yes", "--json"],
      { STEPWISE_URL: "https://api.example.com/", STEPWISE_API_KEY: "sk_env" },
    );
    expect(command).toEqual({
      name: "run",
      conn: { url: "https://api.example.com", apiKey: "sk_env", urlFromFlag: false },
      task: "Compute 17*23",
      body: { input: "Compute 17*23", mode: "plan_solve", deepThink: true, sessionId: "ses_1", approval: { plan: true, tools: "write" } },
      yes: true,
      json: true,
      uploads: [],
    });
    expect(parseCommandLine(["run", "Analyse it", "--file", "a.csv", "--file", "b.csv"], {})).toMatchObject({ uploads: ["a.csv", "b.csv"] });
    expect(parseCommandLine(["run", "Then 5*5", "--session", "chat-1", "--multitask", "enqueue"], {})).toMatchObject({ body: { sessionId: "chat-1", multitask: "enqueue" } });
    expect(parseCommandLine(["watch", "run_1", "--url", "http://x:1", "--api-key", "k"], { STEPWISE_API_KEY: "env" })).toMatchObject({
      name: "watch",
      runId: "run_1",
      conn: { url: "http://x:1", apiKey: "k", urlFromFlag: true },
    });
    expect(parseCommandLine(["run", "What", "is", "2+2?"], {})).toMatchObject({ conn: { url: "http://127.0.0.1:3000" }, body: { input: "What is 2+2?", mode: "auto" } });
    expect(parseCommandLine([], {})).toEqual({ name: "help" });
    expect(parseCommandLine(["run", "--help"], {})).toEqual({ name: "help" });
  });

  it.each([
    [["frob"]],
    [["run"]],
    [["run", "x", "--mode", "fast"]],
    [["run", "x", "--approve-tools", "some"]],
    [["run", "x", "--session", "s", "--multitask", "later"]],
    [["run", "x", "--multitask", "enqueue"]],
    [["list", "--multitask", "enqueue"]],
    [["run", "x", "--bogus"]],
    [["watch"]],
    [["watch", "a", "b"]],
    [["get", "run_1", "--yes"]],
    [["watch", "run_1", "--mode", "react"]],
    [["run", "x", "--url", "not a url"]],
  ])("%j is a usage error", (argv) => {
    expect(() => parseCommandLine(argv, {})).toThrow(UsageError);
  });

  it("approval answers", () => {
    expect(parseYesNo("y")).toEqual({ decision: "approve" });
    expect(parseYesNo(" YES ")).toEqual({ decision: "approve" });
    expect(parseYesNo("n")).toEqual({ decision: "reject" });
    expect(parseYesNo("no: too many steps")).toEqual({ decision: "reject", message: "too many steps" });
    expect(parseYesNo("n skip the report")).toEqual({ decision: "reject", message: "skip the report" });
    expect(parseYesNo("maybe")).toBeUndefined();
    expect(parseYesNo("nope")).toBeUndefined();
    expect(parseJsonObject('{"a": 1}')).toEqual({ a: 1 });
    expect(parseJsonObject("[1]")).toEqual(expect.stringContaining("JSON object"));
    expect(parseJsonObject("{a")).toEqual(expect.stringContaining("not JSON"));
  });
});

describe("each fact once", () => {
  const at = "2026-01-01T00:00:00.000Z";
  const feed = (renderer: Renderer, items: Omit<RunEvent, "seq" | "at">[]) => items.flatMap((e, i) => renderer.event({ ...e, seq: i + 1, at } as RunEvent));

  it("shows streamed text once, as the deltas said it; the thought after it adds nothing", () => {
    const lines = feed(new Renderer({ color: false }), [
      { type: "agent.delta", data: { agent: "executor", taskId: "t1", text: "Done. 17*" } },
      { type: "agent.delta", data: { agent: "executor", taskId: "t2", text: "Done. 47" } },
      { type: "agent.delta", data: { agent: "executor", taskId: "t1", text: "23 = 391" } },
      { type: "agent.thought", data: { agent: "executor", taskId: "t1", text: "Done. 17*23 = 391" } },
      { type: "task.completed", data: { taskId: "t1", title: "x", iteration: 0, status: "succeeded", result: "Done. 17*23 = 391" } },
      { type: "agent.thought", data: { agent: "executor", taskId: "t2", text: "Done. 47" } },
      { type: "task.completed", data: { taskId: "t2", title: "y", iteration: 0, status: "succeeded", result: "Done. 47" } },
    ]);
    expect(lines).toEqual(["  [t1] Done. 17*23 = 391", "  [t2] Done. 47", "✓ t1 done", "✓ t2 done"]);
  });

  it("shows a model's reasoning collapsed to one line before the text it led to", () => {
    const lines = feed(new Renderer({ color: false }), [
      { type: "agent.reasoning", data: { agent: "summarizer", text: "The user wants totals. " } },
      { type: "agent.reasoning", data: { agent: "summarizer", text: "North leads." } },
      { type: "agent.delta", data: { agent: "summarizer", text: "North: 220" } },
      { type: "run.succeeded", data: { result: "North: 220", files: [] } },
    ]);
    expect(lines[0]).toBe("  [summarizer] ▸ reasoning (35 characters): The user wants totals. North leads.");
    expect(lines[1]).toBe("  [summarizer] North: 220");
  });

  it("without deltas, the thought is the text; without either, the task's result is on its line", () => {
    const lines = feed(new Renderer({ color: false }), [
      { type: "agent.thought", data: { agent: "planner", text: "Plan recorded." } },
      { type: "task.completed", data: { taskId: "t3", title: "z", iteration: 0, status: "succeeded", result: "42" } },
    ]);
    expect(lines).toEqual(["  [planner] Plan recorded.", "✓ t3 done: 42"]);
  });

  it("deltas with no thought after them still show, when the agent moves on or the stream ends", () => {
    const renderer = new Renderer({ color: false });
    const lines = feed(renderer, [
      { type: "agent.delta", data: { agent: "react", text: "Let me compute." } },
      { type: "tool.called", data: { agent: "react", callId: "c1", tool: "calculator", arguments: { expression: "1+1" } } },
      { type: "agent.delta", data: { agent: "react", text: "It is 2." } },
    ]);
    expect(lines).toEqual(["  [react] Let me compute.", '  [react] → calculator {"expression":"1+1"}']);
    expect(renderer.flushAll()).toEqual(["  [react] It is 2."]);
  });

  it("does not list files the answer already names", () => {
    const renderer = new Renderer({ color: false });
    feed(renderer, [{ type: "run.succeeded", data: { result: "Done.\nFiles: report.md", files: ["report.md"] } }]);
    const run = { files: [{ name: "report.md", bytes: 10 }, { name: "data.csv", bytes: 5 }], usage: {}, result: "" } as any;
    expect(renderer.summary(run).filter((l) => l.startsWith("Files:"))).toEqual(["Files: data.csv (5 bytes)"]);
  });
});

describe("command line: list, cancel, decide, open", () => {
  const env = { STEPWISE_URL: "http://x:1", STEPWISE_API_KEY: "k" };
  it.each([
    [["list"], { name: "list", query: { limit: 20 } }],
    [["list", "--status", "awaiting_input", "--session", "ses_1", "--limit", "5"], { name: "list", query: { status: "awaiting_input", sessionId: "ses_1", limit: 5 } }],
    [["cancel", "run_1"], { name: "cancel", runId: "run_1" }],
    [["open", "run_1"], { name: "open", runId: "run_1" }],
    [["decide", "run_1", "int_1", "approve"], { name: "decide", runId: "run_1", interruptId: "int_1", body: { decision: "approve" } }],
    [["decide", "run_1", "int_1", "reject", "no", "files", "today"], { name: "decide", body: { decision: "reject", message: "no files today" } }],
    [["decide", "run_1", "int_1", "answer", "Paris"], { name: "decide", body: { decision: "answer", message: "Paris" } }],
    [["decide", "run_1", "int_1", "edit", "--arguments", '{"filename":"a.md"}'], { name: "decide", body: { decision: "edit", arguments: { filename: "a.md" } } }],
  ])("%j", (argv, expected) => {
    expect(parseCommandLine(argv, env)).toMatchObject(expected);
  });

  it.each([
    [["list", "--status", "done"], "--status is one of"],
    [["list", "--limit", "0"], "--limit is a whole number"],
    [["list", "extra"], "takes no arguments"],
    [["cancel"], "takes one run id"],
    [["decide", "run_1", "int_1"], "takes a run id, an interrupt id and a decision"],
    [["decide", "run_1", "int_1", "maybe"], "The decision is one of"],
    [["decide", "run_1", "int_1", "answer"], "'answer' needs the answer"],
    [["decide", "run_1", "int_1", "edit"], "'edit' needs the new arguments"],
    [["decide", "run_1", "int_1", "edit", "--arguments", "{nope"], "--arguments is not JSON"],
    [["decide", "run_1", "int_1", "approve", "--arguments", "{}"], "--arguments goes with 'edit'"],
    [["cancel", "run_1", "--status", "failed"], "--status goes with 'list'"],
  ])("%j is a usage error", (argv, message) => {
    expect(() => parseCommandLine(argv, env)).toThrow(UsageError);
    expect(() => parseCommandLine(argv, env)).toThrow(message);
  });
});
