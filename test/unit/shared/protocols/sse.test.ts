import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../../../shared/contracts/events.js";
import type { RunRecord } from "../../../../shared/contracts/run.js";
import { TERMINAL_EVENTS } from "../../../../shared/contracts/terminal.js";
import type { HandlerPorts } from "../../../../shared/handlerPorts.js";
import { runEventFrames, type SseOptions, sseFrame } from "../../../../shared/protocols/sse.js";

/**
 * An event-stream parser that follows the WHATWG HTML spec ("Interpreting an event stream"):
 * lines end in CRLF, LF or CR; a blank line dispatches; ':' starts a comment; one space after the
 * colon is dropped; data lines are joined with LF; an event with no data is not dispatched.
 */
function parseEventStream(stream: string) {
  const events: { type: string; data: string; lastEventId: string }[] = [];
  const comments: string[] = [];
  let data = "";
  let type = "";
  let lastEventId = "";
  let retry: number | undefined;
  const lines = stream.split(/\r\n|\n|\r/);
  // The final element is what followed the last line break: an unterminated line is ignored.
  lines.pop();
  for (const line of lines) {
    if (line === "") {
      if (data !== "") events.push({ type: type || "message", data: data.endsWith("\n") ? data.slice(0, -1) : data, lastEventId });
      data = "";
      type = "";
      continue;
    }
    if (line.startsWith(":")) {
      comments.push(line.slice(1));
      continue;
    }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data += `${value}\n`;
    else if (field === "event") type = value;
    else if (field === "id" && !value.includes("\0")) lastEventId = value;
    else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
  }
  return { events, comments, lastEventId, retry };
}

const event = (seq: number, type: RunEvent["type"] = "agent.thought", text = `event ${seq}`): RunEvent => {
  const at = new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString();
  if (type === "run.succeeded") return { type, data: { result: text, files: [] }, seq, at };
  if (type === "run.failed") return { type, data: { error: { code: "x", message: text } }, seq, at };
  return { type: "agent.thought", data: { agent: "react", text }, seq, at };
};

describe("sseFrame", () => {
  it("writes id = sequence number, event = type, one data line with the event as JSON, then a blank line", () => {
    const e = event(7);
    expect(sseFrame(e)).toBe(`id: 7\nevent: agent.thought\ndata: ${JSON.stringify(e)}\n\n`);
  });

  it("is parsed by a spec-compliant EventSource as exactly that event", () => {
    const e = event(42, "run.succeeded", "The answer is 391.\n\nFiles: report.md");
    const parsed = parseEventStream(sseFrame(e));
    expect(parsed.events).toEqual([{ type: "run.succeeded", data: JSON.stringify(e), lastEventId: "42" }]);
    expect(JSON.parse(parsed.events[0]!.data)).toEqual(e);
  });

  it("text with line breaks of every kind cannot break out of the data line or forge fields", () => {
    const nasty = "line1\nline2\r\nline3\rline4\n\nid: 999\nevent: run.succeeded\ndata: {}\n\n: comment\u2028\u2029\0end";
    const e = event(3, "agent.thought", nasty);
    const frame = sseFrame(e);
    expect(frame.endsWith("\n\n")).toBe(true);
    expect(frame.slice(0, -2).split(/\r\n|\n|\r/)).toHaveLength(3); // id, event, data
    const parsed = parseEventStream(frame);
    expect(parsed.events).toHaveLength(1);
    expect(parsed.events[0]!.lastEventId).toBe("3");
    expect(parsed.events[0]!.type).toBe("agent.thought");
    expect(JSON.parse(parsed.events[0]!.data)).toEqual(e);
  });

  it("property: any text round-trips through a frame, and frames concatenate into a stream of the same events", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary" }), { minLength: 1, maxLength: 5 }), (texts) => {
        const events = texts.map((text, i) => event(i + 1, "agent.thought", text));
        const parsed = parseEventStream(events.map(sseFrame).join(""));
        expect(parsed.events.map((p) => JSON.parse(p.data))).toEqual(events);
        expect(parsed.events.map((p) => p.lastEventId)).toEqual(events.map((e) => String(e.seq)));
      }),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// runEventFrames over a fake event log: the ordering and ending rules the stream promises.

interface FakeLog {
  events: RunEvent[];
  status: RunRecord["status"];
  /** The terminal event's sequence number, kept on the run when it ends (shared/run/lifecycle.ts endRun). */
  terminalSeq?: number;
  calls: number;
  /** Called before each list: lets a test change the log between polls. */
  onList?: (call: number) => void;
}

function fakeServices(log: FakeLog): HandlerPorts {
  return {
    events: {
      async list(_runId: string, after = 0, limit = 100) {
        log.calls++;
        log.onList?.(log.calls);
        return log.events
          .filter((e) => e.seq > after)
          .sort((a, b) => a.seq - b.seq)
          .slice(0, limit);
      },
      async tip() {
        const last = log.events.reduce((a, e) => (e.seq > a.seq ? e : a), { seq: 0, type: "" } as { seq: number; type: string });
        return { seq: last.seq, closed: TERMINAL_EVENTS.has(last.type) };
      },
    },
    runs: {
      async get() {
        return { status: log.status, terminalSeq: log.terminalSeq } as RunRecord;
      },
    },
  } as unknown as HandlerPorts;
}

const options = (overrides: Partial<SseOptions> = {}): SseOptions => ({
  pollMs: 1,
  heartbeatMs: 60_000,
  maxMs: 60_000,
  gapMs: 60_000,
  signal: new AbortController().signal,
  ...overrides,
});

async function collect(frames: AsyncGenerator<string>, max = 1_000): Promise<string[]> {
  const out: string[] = [];
  for await (const frame of frames) {
    out.push(frame);
    if (out.length >= max) break;
  }
  return out;
}

const ids = (chunks: string[]) => parseEventStream(chunks.join("")).events.map((e) => Number(e.lastEventId));

describe("runEventFrames", () => {
  it("starts with a retry hint, sends the events after the cursor in order, and ends after the terminal event", async () => {
    const log: FakeLog = { events: [1, 2, 3, 4].map((n) => event(n)).concat(event(5, "run.succeeded")), status: "succeeded", calls: 0 };
    const chunks = await collect(runEventFrames(fakeServices(log), "run_1", 2, options()));
    expect(chunks[0]).toBe("retry: 1000\n\n");
    expect(parseEventStream(chunks.join("")).retry).toBe(1000);
    expect(ids(chunks)).toEqual([3, 4, 5]);
    expect(chunks.at(-1)).toBe(sseFrame(log.events[4]!));
  });

  it("ends after run.failed too, and never sends events after the terminal one", async () => {
    const log: FakeLog = { events: [event(1), event(2, "run.failed"), event(3)], status: "failed", calls: 0 };
    expect(ids(await collect(runEventFrames(fakeServices(log), "run_1", 0, options())))).toEqual([1, 2]);
  });

  it("follows a live run: events written between polls arrive, in order", async () => {
    const log: FakeLog = { events: [event(1)], status: "running", calls: 0 };
    log.onList = (call) => {
      if (call === 3) log.events.push(event(2), event(3));
      if (call === 5) log.events.push(event(4, "run.succeeded"));
    };
    expect(ids(await collect(runEventFrames(fakeServices(log), "run_1", 0, options())))).toEqual([1, 2, 3, 4]);
  });

  it("holds back a later event while an earlier sequence number is still being written: no gap, no duplicate", async () => {
    // seq 2 was reserved by a slow writer; 3 and 4 are visible first.
    const log: FakeLog = { events: [event(1), event(3), event(4, "run.succeeded")], status: "running", calls: 0 };
    log.onList = (call) => {
      if (call === 4) log.events.push(event(2));
    };
    expect(ids(await collect(runEventFrames(fakeServices(log), "run_1", 0, options())))).toEqual([1, 2, 3, 4]);
  });

  it("skips a sequence number whose writer died once gapMs has passed, instead of stalling forever", async () => {
    const log: FakeLog = { events: [event(1), event(3), event(4, "run.succeeded")], status: "succeeded", calls: 0 };
    expect(ids(await collect(runEventFrames(fakeServices(log), "run_1", 0, options({ gapMs: 0 }))))).toEqual([1, 3, 4]);
  });

  it("sends heartbeat comments while nothing happens, and stops when the client goes away", async () => {
    const controller = new AbortController();
    const log: FakeLog = { events: [event(1)], status: "running", calls: 0 };
    const chunks: string[] = [];
    for await (const chunk of runEventFrames(fakeServices(log), "run_1", 0, options({ heartbeatMs: 1, signal: controller.signal }))) {
      chunks.push(chunk);
      if (chunks.filter((c) => c === ": heartbeat\n\n").length === 2) controller.abort();
    }
    expect(ids(chunks)).toEqual([1]);
    expect(parseEventStream(chunks.join("")).comments.filter((c) => c.trim() === "heartbeat")).toHaveLength(2);
  });

  it("ends at maxMs with a comment telling the client where to resume", async () => {
    const log: FakeLog = { events: [event(1), event(2)], status: "running", calls: 0 };
    const chunks = await collect(runEventFrames(fakeServices(log), "run_1", 0, options({ maxMs: 0 })));
    expect(ids(chunks)).toEqual([1, 2]);
    expect(chunks.at(-1)).toMatch(/^: .*reconnect with Last-Event-ID: 2\n\n$/);
  });

  it("ends when the run ended without a terminal event (e.g. its start failed)", async () => {
    const log: FakeLog = { events: [], status: "failed", calls: 0 };
    // (it may wait up to gapMs for a late terminal event, see below; here there is none)
    expect(await collect(runEventFrames(fakeServices(log), "run_1", 0, options({ gapMs: 20 })))).toEqual(["retry: 1000\n\n"]);
  });

  // finalizeRun / recordFailure (shared/run/lifecycle.ts) set the terminal status first and append
  // the terminal event after it (counter update, then BatchWrite). A stream that polls in between
  // sees "no new events" + "run ended" and must not close before the terminal event arrives.
  it("does not close before the terminal event when the run's status turned terminal first", async () => {
    const log: FakeLog = { events: [event(1)], status: "succeeded", terminalSeq: 2, calls: 0 };
    log.onList = (call) => {
      // list #1 delivers seq 1; list #2 finds nothing (then the stream reads the run: succeeded);
      // the terminal event's write lands just after the stream's re-check (list #3).
      if (call === 4) log.events.push(event(2, "run.succeeded"));
    };
    const chunks = await collect(runEventFrames(fakeServices(log), "run_1", 0, options()), 50);
    expect(ids(chunks)).toEqual([1, 2]);
  });

  it("a resume after the terminal event (EventSource reconnects after every close) ends instead of waiting for more", async () => {
    const log: FakeLog = { events: [event(1), event(2, "run.succeeded")], status: "succeeded", terminalSeq: 2, calls: 0 };
    const chunks = await collect(runEventFrames(fakeServices(log), "run_1", 2, options({ gapMs: 20 })));
    expect(chunks).toEqual(["retry: 1000\n\n"]);
  });
});
