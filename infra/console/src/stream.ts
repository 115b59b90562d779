import { api, enc, type RunEvent } from "./api.js";
import { STREAM_EVENT_TYPES } from "./eventTypes.js";

const TERMINAL = new Set(["run.succeeded", "run.failed", "run.timed_out", "run.cancelled", "run.interrupted"]);

export interface StreamHandle {
  close(): void;
}

/**
 * Follows a run's events with EventSource and a short-lived stream token (never the API key in a
 * URL). The browser reconnects by itself with Last-Event-ID; when it gives up (an expired token, a
 * server restart) this opens a new stream after the last event seen. Events are delivered once,
 * in order: anything at or below the last sequence number is dropped.
 */
export function followRun(runId: string, streamUrl: string, onEvent: (event: RunEvent) => void, onState: (state: "live" | "reconnecting" | "ended") => void): StreamHandle {
  let lastSeq = 0;
  let source: EventSource | undefined;
  let closed = false;
  let retryTimer: number | undefined;

  const open = async () => {
    if (closed) return;
    try {
      const { token } = await api<{ token: string }>("POST", `/v1/runs/${enc(runId)}/stream-token`);
      if (closed) return;
      const url = new URL(streamUrl, location.href);
      url.searchParams.set("token", token);
      url.searchParams.set("after", String(lastSeq));
      source = new EventSource(url);
    } catch {
      onState("reconnecting");
      retryTimer = window.setTimeout(open, 2000);
      return;
    }
    source.onopen = () => onState("live");
    const deliver = (message: MessageEvent) => {
      const event = JSON.parse(message.data) as RunEvent;
      if (event.seq <= lastSeq) return;
      lastSeq = event.seq;
      onEvent(event);
      if (TERMINAL.has(event.type)) {
        close();
        onState("ended");
      }
    };
    for (const type of STREAM_EVENT_TYPES) source.addEventListener(type, deliver as EventListener);
    source.onerror = () => {
      if (closed) return;
      onState("reconnecting");
      // CLOSED: the browser will not retry (e.g. 401 for an expired token); start over with a new token.
      if (source?.readyState === EventSource.CLOSED) {
        source.close();
        retryTimer = window.setTimeout(open, 1000);
      }
    };
  };

  const close = () => {
    closed = true;
    source?.close();
    if (retryTimer) clearTimeout(retryTimer);
  };
  void open();
  return { close };
}
