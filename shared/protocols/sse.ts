import type { RunEvent } from "../contracts/events.js";
import { TERMINAL_EVENTS, TERMINAL_STATUSES } from "../contracts/terminal.js";
import type { Ports } from "../ports/index.js";

export interface SseOptions {
  pollMs: number;
  heartbeatMs: number;
  /** End the stream after this long; the client reconnects with Last-Event-ID. */
  maxMs: number;
  /** How long a missing sequence number may hold back later events before it is skipped. */
  gapMs?: number;
  signal: AbortSignal;
  /** How an event is written (default: sseFrame); "" writes nothing. */
  frame?: (event: RunEvent) => string;
  /** Ends the stream early, once true after a frame (a view whose client wants only part of the run). */
  done?: () => boolean;
}

/** One Server-Sent Events frame: `id` is the event's sequence number, `event` its type. */
export function sseFrame(event: RunEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * The frames of a run's stream from sequence `after` on, in order, with no gap and no duplicate:
 * the log lists only its gap-free prefix (a number taken but not yet written holds back the ones
 * after it, and one whose writer stopped is filled), so the stream never sees a gap; should an
 * adapter ever show a later number before an earlier one, the stream holds back until it arrives
 * (at most `gapMs`). Ends after the terminal event, at `maxMs`, or when `signal` aborts.
 */
export type StreamEnd = "run ended" | "time limit" | "client disconnected";

export async function* runEventFrames(
  services: Pick<Ports, "events" | "runs">,
  runId: string,
  after: number,
  options: SseOptions,
): AsyncGenerator<string, StreamEnd> {
  const started = Date.now();
  const gapMs = options.gapMs ?? 3_000;
  let cursor = after;
  let lastWrite = Date.now();
  let gapSince: number | undefined;
  yield "retry: 1000\n\n";

  while (!options.signal.aborted) {
    const events = await services.events.list(runId, cursor, 100);
    let delivered = 0;
    for (const event of events) {
      if (event.seq !== cursor + 1) {
        gapSince ??= Date.now();
        if (Date.now() - gapSince < gapMs) break;
      }
      gapSince = undefined;
      cursor = event.seq;
      delivered++;
      yield (options.frame ?? sseFrame)(event);
      lastWrite = Date.now();
      if (TERMINAL_EVENTS.has(event.type) || options.done?.()) return "run ended";
    }
    if (delivered === 0 && events.length === 0) {
      // Past the run's terminal event (a client resuming after the end), or a run that is gone: nothing more will come.
      const tip = await services.events.tip(runId);
      if (tip.closed && cursor >= tip.seq) return "run ended";
      if (tip.seq === 0) {
        // No event at all: a run that is gone, or one that ended without any (its start failed).
        const run = await services.runs.get(runId);
        if (!run || TERMINAL_STATUSES.has(run.status)) return "run ended";
      }
    }
    if (Date.now() - started >= options.maxMs) {
      yield `: stream time limit reached; reconnect with Last-Event-ID: ${cursor}\n\n`;
      return "time limit";
    }
    if (Date.now() - lastWrite >= options.heartbeatMs) {
      yield ": heartbeat\n\n";
      lastWrite = Date.now();
    }
    if (delivered < 100) await sleep(options.pollMs, options.signal);
  }
  return "client disconnected";
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
