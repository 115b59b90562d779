import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readEventStream, readEventStreamItems, type SseCursor, type SseMessage } from "../../../../shared/apiClient/eventStream.js";
import { sseFrame } from "../../../../shared/protocols/sse.js";
import { calculatorRunEvents } from "../../../support/sampleRun.js";

const encoder = new TextEncoder();
const bytes = (chunk: string | Uint8Array) => (typeof chunk === "string" ? encoder.encode(chunk) : chunk);

/** A body that delivers `chunks` as they are, then ends. */
const bodyOf = (chunks: (string | Uint8Array)[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(bytes(chunk));
      controller.close();
    },
  });

/** Everything one reader dispatches for `chunks`. */
async function read(chunks: (string | Uint8Array)[], cursor: SseCursor = { lastEventId: "" }): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for await (const message of readEventStream(bodyOf(chunks), cursor)) messages.push(message);
  return messages;
}

/** `text` cut at the given positions (never inside a surrogate pair: each part is encoded on its own). */
function splitAt(text: string, cuts: number[]): string[] {
  const whole = (c: number) => (/[\uD800-\uDBFF]/.test(text[c - 1] ?? "") ? c + 1 : c);
  const points = [...new Set(cuts.map((c) => whole(Math.max(0, Math.min(text.length, c)))))].sort((a, b) => a - b);
  const parts: string[] = [];
  let start = 0;
  for (const point of points) {
    parts.push(text.slice(start, point));
    start = point;
  }
  parts.push(text.slice(start));
  return parts;
}

const sampleEvents = calculatorRunEvents("17*23 = 391 — ünïcødé ✓ 🎉\nsecond line");
/** A stream as the server writes it: retry first, frames, heartbeats between them. */
const serverStream = `retry: 1000\n\n${sampleEvents.map(sseFrame).join(": heartbeat\n\n")}`;
const expected = sampleEvents.map((e) => ({ type: e.type, data: JSON.stringify(e), lastEventId: String(e.seq) }));

describe("readEventStream", () => {
  it("reads the server's frames: ids, event types, JSON data, retry; heartbeats dispatch nothing", async () => {
    const cursor: SseCursor = { lastEventId: "" };
    expect(await read([serverStream], cursor)).toEqual(expected);
    expect(cursor).toEqual({ lastEventId: "4", retryMs: 1000 });
  });

  it("gives the same events whatever the chunking, with LF, CRLF or CR line ends", async () => {
    for (const eol of ["\n", "\r\n", "\r"]) {
      const text = serverStream.replaceAll("\n", eol);
      expect(await read([text])).toEqual(expected);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat({ max: text.length }), { maxLength: 30 }), async (cuts) => {
          expect(await read(splitAt(text, cuts))).toEqual(expected);
        }),
        { numRuns: 150 },
      );
    }
  });

  it("handles every cut position, including between the CR and LF of a CRLF", async () => {
    const text = "id: 7\r\nevent: x\r\ndata: a\r\ndata: b\r\n\r\n: c\r\n\r\nid: 8\r\ndata: z\r\n\r\n";
    const whole = [
      { type: "x", data: "a\nb", lastEventId: "7" },
      { type: "message", data: "z", lastEventId: "8" },
    ];
    expect(await read([text])).toEqual(whole);
    for (let i = 0; i <= text.length; i++) expect(await read(splitAt(text, [i])), `cut at ${i}`).toEqual(whole);
    expect(await read([...text])).toEqual(whole);
  });

  it("decodes UTF-8 split inside a character", async () => {
    const all = encoder.encode(serverStream);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: all.length }), { maxLength: 20 }), async (cuts) => {
        const points = [...new Set([0, ...cuts, all.length])].sort((a, b) => a - b);
        const chunks = points.slice(1).map((end, i) => all.subarray(points[i]!, end));
        expect(await read(chunks)).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it("a CR ending a chunk ends its line at once, and an LF opening the next chunk belongs to it", async () => {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
    });
    const reader = readEventStream(body, { lastEventId: "" });
    controller.enqueue(bytes("data: a\r"));
    controller.enqueue(bytes("\r"));
    // Dispatched with the stream still open: nothing waits for a possible LF.
    expect((await reader.next()).value).toEqual({ type: "message", data: "a", lastEventId: "" });
    // "\r" + "\n" is one line break, not a blank line: b and c are one event.
    controller.enqueue(bytes("\ndata: b\r"));
    controller.enqueue(bytes("\ndata: c\n\n"));
    expect((await reader.next()).value).toEqual({ type: "message", data: "b\nc", lastEventId: "" });
    controller.close();
    expect((await reader.next()).done).toBe(true);
  });

  it("joins multi-line data with LF, keeps empty data lines, and drops one space after the colon only", async () => {
    expect(await read(["data: first\ndata:\ndata:  indented\ndata\n\n", "data:x\n\n", "event\ndata: z\n\n"])).toEqual([
      { type: "message", data: "first\n\n indented\n", lastEventId: "" },
      { type: "message", data: "x", lastEventId: "" },
      { type: "message", data: "z", lastEventId: "" },
    ]);
  });

  it("comments and blocks without data dispatch nothing; the event type does not carry over", async () => {
    expect(await read([":\n: heartbeat\n:no space\n\nevent: lonely\n\n", "event: a\ndata: 1\n\ndata: 2\n\n"])).toEqual([
      { type: "a", data: "1", lastEventId: "" },
      { type: "message", data: "2", lastEventId: "" },
    ]);
  });

  it("ids: kept for later events, set by blocks without data, reset by an empty id, ignored with NUL", async () => {
    const cursor: SseCursor = { lastEventId: "" };
    const messages = await read(
      ["id: 1\ndata: a\n\n", "data: b\n\n", "id: 5\n\n", "id: 6\u0000x\ndata: c\n\n", "id\ndata: d\n\n", "id: 9\n\n"],
      cursor,
    );
    expect(messages.map((m) => [m.data, m.lastEventId])).toEqual([
      ["a", "1"],
      ["b", "1"],
      ["c", "5"],
      ["d", ""],
    ]);
    // The last block had no data, and still set the ID a reconnection sends.
    expect(cursor.lastEventId).toBe("9");
  });

  it("starts from the cursor it is given (a reconnection)", async () => {
    expect(await read(["data: x\n\n"], { lastEventId: "41" })).toEqual([{ type: "message", data: "x", lastEventId: "41" }]);
  });

  it("retry takes ASCII digits only", async () => {
    const cursor: SseCursor = { lastEventId: "" };
    await read(["retry: 2500\n", "retry: 2.5s\n", "retry: -1\n", "retry:\n\n"], cursor);
    expect(cursor.retryMs).toBe(2500);
    await read(["retry: 300\n\n"], cursor);
    expect(cursor.retryMs).toBe(300);
  });

  it("drops a leading BOM, unknown fields, and an unterminated last block", async () => {
    expect(await read(["\ufeffdata: a\nfoo: bar\n\n", "data: cut off\n"])).toEqual([{ type: "message", data: "a", lastEventId: "" }]);
    // A BOM split across chunks still counts as the stream's first character.
    const bom = encoder.encode("\ufeffdata: b\n\n");
    expect(await read([bom.subarray(0, 1), bom.subarray(1, 2), bom.subarray(2)])).toEqual([
      { type: "message", data: "b", lastEventId: "" },
    ]);
  });

  it("stopping early cancels the body (the connection closes)", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(bytes("data: one\n\ndata: two\n\n")),
      cancel: () => {
        cancelled = true;
      },
    });
    for await (const message of readEventStream(body, { lastEventId: "" })) if (message.data === "one") break;
    expect(cancelled).toBe(true);
  });
});

describe("readEventStreamItems", () => {
  it("gives the comments between the events, in the order they came, and each block's own fields", async () => {
    const items = [];
    const chunks = [": heartbeat\n\nid: 1\nevent: run.started\ndata: {}\n\n: heart", "beat\n\ndata: x\n\n"];
    for await (const item of readEventStreamItems(bodyOf(chunks), { lastEventId: "" })) items.push(item);
    expect(items).toEqual([
      { kind: "comment", text: "heartbeat" },
      {
        kind: "event",
        message: { type: "run.started", data: "{}", lastEventId: "1" },
        fields: { event: "run.started", id: "1" },
      },
      { kind: "comment", text: "heartbeat" },
      // The last event ID carries over; a block without its own fields has none.
      { kind: "event", message: { type: "message", data: "x", lastEventId: "1" }, fields: {} },
    ]);
  });
});
