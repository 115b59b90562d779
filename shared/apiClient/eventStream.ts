import { createParser } from "eventsource-parser";

/** One dispatched Server-Sent Event: its type (`message` when the block names none), data and the last event ID. */
export interface SseMessage {
  type: string;
  data: string;
  lastEventId: string;
}

/** What a stream carries, in order: events, and the comments between them (a server's heartbeat). */
export type SseItem =
  /** `fields`: the block's own `event` and `id` fields, those it has. */
  { kind: "event"; message: SseMessage; fields: { event?: string; id?: string } } | { kind: "comment"; text: string };

/**
 * What a reader keeps across connections: the last event ID (sent back as `Last-Event-ID` when
 * reconnecting) and the reconnection time the server asked for with `retry`, if it did.
 */
export interface SseCursor {
  lastEventId: string;
  retryMs?: number;
}

/**
 * The events of one connection's body, in order, parsed by eventsource-parser to the WHATWG rules
 * ("Interpreting an event stream"): UTF-8 decoded across chunk boundaries, lines ending in CRLF,
 * LF or CR, `data` lines joined with LF, `id` kept (even from a block without data) until the
 * next one, `retry` in ASCII digits only. An unterminated block at the end is dropped. Stopping the
 * iteration early cancels the body, which closes the connection.
 */
export async function* readEventStream(body: ReadableStream<Uint8Array>, cursor: SseCursor): AsyncGenerator<SseMessage, void, undefined> {
  for await (const item of readEventStreamItems(body, cursor)) if (item.kind === "event") yield item.message;
}

/** The events of one connection's body and its comments, in the order they came (see readEventStream). */
export async function* readEventStreamItems(body: ReadableStream<Uint8Array>, cursor: SseCursor): AsyncGenerator<SseItem, void, undefined> {
  const ready: SseItem[] = [];
  const parser = createParser({
    onId: (id) => (cursor.lastEventId = id),
    onRetry: (ms) => (cursor.retryMs = ms),
    onComment: (text) => ready.push({ kind: "comment", text }),
    onEvent: (event) =>
      ready.push({
        kind: "event",
        message: { type: event.event ?? "message", data: event.data, lastEventId: cursor.lastEventId },
        fields: { ...(event.event !== undefined ? { event: event.event } : {}), ...(event.id !== undefined ? { id: event.id } : {}) },
      }),
  });
  const decoder = new TextDecoder();
  // A reader rather than `for await` over the body: Safari 16 and Chrome 110 cannot iterate a ReadableStream.
  const reader = body.getReader();
  let done = false;
  try {
    while (!done) {
      const chunk = await reader.read();
      done = chunk.done;
      parser.feed(done ? decoder.decode() : decoder.decode(chunk.value, { stream: true }));
      yield* ready.splice(0);
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
  }
}
