import type { RunEvent } from "../contracts/events.js";
import { TERMINAL_EVENTS, TERMINAL_STATUSES } from "../contracts/terminal.js";
import type { StepwiseClient } from "./client.js";
import { ApiError, apiError, ConnectionError, describeFetchError } from "./errors.js";
import { readEventStream, type SseCursor } from "./eventStream.js";

export interface FollowOptions {
  /** The stream URL (`links.stream` of the run); defaults to `{url}/v1/runs/{id}/stream`. */
  streamUrl?: string;
  /** Resume after this sequence number (0: from the start). */
  after?: number;
  signal?: AbortSignal;
  /** Consecutive failed connection attempts before giving up with a ConnectionError (default 6; Infinity: never). */
  maxFailures?: number;
  /** Told when a connection is open and events can flow. */
  onOpen?: () => void;
  /** Told about every reconnection, with the reason and the delay before it (attempt 0: the server ended the stream). */
  onReconnect?: (info: { reason: string; delayMs: number; attempt: number; lastEventId: string }) => void;
  /** Told about frames that are not run events (non-JSON data). */
  onWarning?: (message: string) => void;
}

const DEFAULT_RETRY_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

/**
 * A run's events from `after` on, live, in order, each once (anything at or below the last
 * sequence number seen is dropped): reconnects with Last-Event-ID whenever the stream ends or
 * breaks (after the server's `retry` delay, with backoff while connections fail), and ends after
 * the terminal event, or when the run has ended without one.
 * Throws ApiError for a 4xx, ConnectionError when connecting keeps failing.
 */
export async function* followRun(client: StepwiseClient, runId: string, options: FollowOptions = {}): AsyncGenerator<RunEvent, void> {
  const maxFailures = options.maxFailures ?? 6;
  const cursor: SseCursor = { lastEventId: options.after ? String(options.after) : "" };
  let lastSeq = options.after ?? 0;
  let failures = 0;

  const reconnect = async (reason: string, failed: boolean) => {
    if (failed) failures++;
    if (failures > maxFailures) throw new ConnectionError(`Lost the stream of run ${runId} and could not reconnect (${reason}).`);
    const retryMs = cursor.retryMs ?? DEFAULT_RETRY_MS;
    const delayMs = failed ? Math.min(retryMs * 2 ** (failures - 1), MAX_BACKOFF_MS) : retryMs;
    options.onReconnect?.({ reason, delayMs, attempt: failures, lastEventId: cursor.lastEventId });
    await sleep(delayMs, options.signal);
  };

  for (;;) {
    options.signal?.throwIfAborted();
    let res: Response;
    try {
      res = await client.openStream(runId, options.streamUrl, cursor.lastEventId, options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      // A refused stream token is as final as a refused stream; an unreachable API is worth another try.
      if (error instanceof ApiError && !retryable(error.status)) throw error;
      await reconnect(error instanceof ApiError || error instanceof ConnectionError ? error.message : describeFetchError(error), true);
      continue;
    }
    if (!res.ok) {
      const error = apiError(res.status, await res.text().catch(() => ""));
      if (!retryable(res.status)) throw error;
      await reconnect(`${res.status} ${error.message}`, true);
      continue;
    }
    const type = res.headers.get("content-type") ?? "";
    if (!/^text\/event-stream\b/i.test(type)) {
      await res.body?.cancel().catch(() => {});
      // Named without its query: a stream token is no one's business in a message.
      throw new ConnectionError(`${res.url.split("?")[0]} answered with ${type || "no content type"}, not an event stream.`);
    }
    failures = 0;
    options.onOpen?.();

    let delivered = 0;
    let broken: string | undefined;
    try {
      if (res.body) {
        for await (const message of readEventStream(res.body, cursor)) {
          let event: RunEvent;
          try {
            event = JSON.parse(message.data) as RunEvent;
          } catch {
            options.onWarning?.(`Skipped a '${message.type}' frame whose data is not JSON.`);
            continue;
          }
          if (event.seq <= lastSeq) continue;
          lastSeq = event.seq;
          delivered++;
          yield event;
          if (TERMINAL_EVENTS.has(event.type)) return;
        }
      }
    } catch (error) {
      if (options.signal?.aborted) throw error;
      broken = describeFetchError(error);
    }

    if (delivered === 0 && !broken) {
      // The server ends the stream of a run that ended without a terminal event; so do we.
      const run = await client.getRun(runId).catch((error) => {
        if (error instanceof ApiError) throw error;
        return undefined; // unreachable for now: reconnecting will tell
      });
      if (run && TERMINAL_STATUSES.has(run.status)) return;
    }
    await reconnect(broken ? `the connection broke: ${broken}` : "the server ended the stream", broken !== undefined);
  }
}

/** Server faults, timeouts and throttling are worth another try; other 4xx are final. */
const retryable = (status: number) => status >= 500 || status === 429 || status === 408;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
