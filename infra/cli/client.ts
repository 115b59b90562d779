/**
 * The HTTP side of the `stepwise` command: JSON requests to the API and a Server-Sent Events
 * reader for `GET /v1/runs/{id}/stream` that reconnects (with Last-Event-ID and the server's
 * `retry` delay) until the run's terminal event.
 */
import type { z } from "zod";
import type { RunList as RunListSchema } from "../../shared/contracts/responses.js";
import { TERMINAL_EVENTS, type RunEvent } from "../../shared/contracts/events.js";
import type { ResolveInterruptRequest } from "../../shared/contracts/interrupts.js";
import { TERMINAL_STATUSES, type Multitask, type RequestedMode, type RunStatus } from "../../shared/contracts/run.js";
import type { interruptView, runView } from "../../shared/run/view.js";
import { INLINE_UPLOAD_BYTES, type PendingUpload, type UploadedPart } from "../../shared/ports/files.js";

/** Parts of a large upload sent at once, and how long one part (16 MiB) may take. */
const PARALLEL_PARTS = 4;
const PART_TIMEOUT_MS = 10 * 60_000;

/** `GET /v1/runs/{id}` as it arrives over the wire. */
export type RunView = ReturnType<typeof runView>;
export type InterruptView = ReturnType<typeof interruptView>;
export type RunList = z.infer<typeof RunListSchema>;

export interface CreatedRun {
  runId: string;
  sessionId: string;
  status: RunStatus;
  links: { self: string; events: string; stream: string; console?: string };
}

export interface CreateRunBody {
  input: string;
  mode?: RequestedMode;
  deepThink?: boolean;
  sessionId?: string;
  /** When the session has a run in flight. */
  multitask?: Multitask;
  approval?: { plan: boolean; tools: "none" | "write" | "all" };
  /** Ids of uploaded files (POST /v1/files). */
  files?: string[];
}

/** The API answered with a 4xx or 5xx; `code` and `message` come from its `{error: {…}}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }

  get isAuth(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** The API could not be reached (or answered with something that is not the API). */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConnectionError";
  }
}

// ---------------------------------------------------------------------------------------------
// Server-Sent Events parser (WHATWG HTML, "Interpreting an event stream")
// ---------------------------------------------------------------------------------------------

export type SseItem =
  | { kind: "event"; type: string; data: string; lastEventId: string }
  | { kind: "comment"; text: string }
  | { kind: "retry"; ms: number };

/**
 * An incremental event-stream parser. Feed it chunks (strings, or bytes decoded as UTF-8 across
 * chunk boundaries) split anywhere; it returns what each chunk completed: dispatched events,
 * comments and `retry` changes. Lines end in CRLF, LF or CR (a CR at the end of one chunk and an
 * LF at the start of the next are one line break); a leading BOM is dropped; `:` starts a
 * comment; one space after the field's colon is dropped; `data` lines join with LF; `id` sets the
 * last event ID (unless it holds U+0000) even for a block without data; `retry` takes only ASCII
 * digits; a blank line dispatches, and a block without data dispatches nothing. An unterminated
 * block at the end of the stream is discarded.
 */
export class SseParser {
  /** The last event ID: sent back as `Last-Event-ID` when reconnecting. */
  lastEventId: string;
  /** The reconnection time the server asked for, if it did. */
  retryMs: number | undefined;

  private readonly decoder = new TextDecoder("utf-8");
  private buffer = "";
  private atStart = true;
  private skipLeadingLf = false;
  private data = "";
  private eventType = "";
  private idBuffer: string;

  constructor(lastEventId = "") {
    this.lastEventId = lastEventId;
    this.idBuffer = lastEventId;
  }

  feed(chunk: string | Uint8Array): SseItem[] {
    let text = typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.atStart && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.atStart = false;
    }
    if (this.skipLeadingLf && text.length > 0) {
      if (text[0] === "\n") text = text.slice(1);
      this.skipLeadingLf = false;
    }
    this.buffer += text;
    const items: SseItem[] = [];
    let start = 0;
    for (;;) {
      let end = start;
      while (end < this.buffer.length && this.buffer[end] !== "\n" && this.buffer[end] !== "\r") end++;
      if (end >= this.buffer.length) break;
      const line = this.buffer.slice(start, end);
      if (this.buffer[end] === "\r") {
        if (end + 1 < this.buffer.length) start = this.buffer[end + 1] === "\n" ? end + 2 : end + 1;
        else {
          // A CR ends the chunk: the line is complete, but an LF opening the next chunk belongs to it.
          start = end + 1;
          this.skipLeadingLf = true;
        }
      } else start = end + 1;
      this.line(line, items);
    }
    this.buffer = this.buffer.slice(start);
    return items;
  }

  /** The stream ended: flush the decoder; an incomplete block is dropped, per the spec. */
  end(): SseItem[] {
    const rest = this.decoder.decode();
    const items = rest ? this.feed(rest) : [];
    this.buffer = "";
    this.data = "";
    this.eventType = "";
    return items;
  }

  private line(line: string, items: SseItem[]) {
    if (line === "") return this.dispatch(items);
    if (line.startsWith(":")) {
      items.push({ kind: "comment", text: line.slice(1).replace(/^ /, "") });
      return;
    }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.eventType = value;
        break;
      case "data":
        this.data += `${value}\n`;
        break;
      case "id":
        if (!value.includes("\0")) this.idBuffer = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) {
          this.retryMs = Number(value);
          items.push({ kind: "retry", ms: this.retryMs });
        }
        break;
      default:
        // unknown fields are ignored
    }
  }

  private dispatch(items: SseItem[]) {
    this.lastEventId = this.idBuffer;
    if (this.data === "") {
      this.eventType = "";
      return;
    }
    const data = this.data.endsWith("\n") ? this.data.slice(0, -1) : this.data;
    items.push({ kind: "event", type: this.eventType || "message", data, lastEventId: this.lastEventId });
    this.data = "";
    this.eventType = "";
  }
}

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

export interface FollowOptions {
  /** The stream URL (`links.stream` of the run); defaults to `{url}/v1/runs/{id}/stream`. */
  streamUrl?: string;
  /** Resume after this sequence number (0: from the start). */
  after?: number;
  signal?: AbortSignal;
  /** Consecutive failed connection attempts before giving up with a ConnectionError. */
  maxFailures?: number;
  /** Told about every reconnection, with the reason and the delay before it. */
  onReconnect?: (info: { reason: string; delayMs: number; attempt: number; lastEventId: string }) => void;
  /** Told about frames that are not run events (non-JSON data). */
  onWarning?: (message: string) => void;
}

const DEFAULT_RETRY_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
const REQUEST_TIMEOUT_MS = 60_000;

export class StepwiseClient {
  readonly url: string;

  constructor(
    url: string,
    readonly apiKey: string | undefined,
  ) {
    this.url = url.replace(/\/+$/, "");
  }

  createRun(body: CreateRunBody): Promise<CreatedRun> {
    return this.request("POST", "/v1/runs", body);
  }

  listRuns(query: { status?: string; sessionId?: string; limit?: number }): Promise<RunList> {
    const params = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)] as [string, string]));
    return this.request("GET", `/v1/runs?${params}`);
  }

  cancelRun(runId: string): Promise<{ runId: string; status: string }> {
    return this.request("POST", `/v1/runs/${encodeURIComponent(runId)}/cancel`);
  }

  getRun(runId: string): Promise<RunView> {
    return this.request("GET", `/v1/runs/${encodeURIComponent(runId)}`);
  }

  /**
   * Uploads a file's bytes (the API records its name and type) → its id, for a run's `files`. A
   * small file goes through the API; a larger one straight to storage through the presigned links
   * `POST /v1/files` hands out (a part per link, a few at once), then the upload is completed.
   */
  async uploadFile(name: string, body: Uint8Array): Promise<{ fileId: string; name: string; bytes: number }> {
    if (body.byteLength > INLINE_UPLOAD_BYTES) return this.uploadThroughLinks(name, body);
    let res: Response;
    try {
      res = await fetch(`${this.url}/v1/files?name=${encodeURIComponent(name)}`, {
        method: "POST",
        headers: { ...this.headers(), accept: "application/json", "content-type": "application/octet-stream" },
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw connectionError(this.url, error);
    }
    const text = await res.text();
    if (!res.ok) throw apiError(res.status, text);
    return JSON.parse(text);
  }

  private async uploadThroughLinks(name: string, body: Uint8Array): Promise<{ fileId: string; name: string; bytes: number }> {
    const pending = await this.request<PendingUpload & { complete: string }>("POST", "/v1/files", { name, bytes: body.byteLength });
    const queue = [...pending.parts];
    const uploaded: UploadedPart[] = [];
    const putParts = async () => {
      for (let part = queue.shift(); part; part = queue.shift()) {
        const start = (part.partNumber - 1) * pending.partBytes;
        let res: Response;
        try {
          res = await fetch(part.url, { method: "PUT", body: body.subarray(start, start + pending.partBytes), signal: AbortSignal.timeout(PART_TIMEOUT_MS) });
        } catch (error) {
          throw connectionError(new URL(part.url).origin, error);
        }
        if (!res.ok) throw apiError(res.status, await res.text());
        await res.arrayBuffer();
        uploaded.push({ partNumber: part.partNumber, etag: res.headers.get("etag") ?? "" });
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, pending.parts.length) }, putParts));
    return this.request("POST", new URL(pending.complete).pathname, { parts: uploaded });
  }

  listFiles(runId: string): Promise<{ runId: string; files: Array<{ name: string; contentType: string; bytes: number; download: string }> }> {
    return this.request("GET", `/v1/runs/${encodeURIComponent(runId)}/files`);
  }

  resolveInterrupt(runId: string, interruptId: string, body: ResolveInterruptRequest): Promise<InterruptView> {
    return this.request("POST", `/v1/runs/${encodeURIComponent(runId)}/interrupts/${encodeURIComponent(interruptId)}`, body);
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const target = `${this.url}${path}`;
    let res: Response;
    try {
      res = await fetch(target, {
        method,
        headers: { ...this.headers(), accept: "application/json", ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw connectionError(this.url, error);
    }
    const text = await res.text().catch((error) => {
      throw connectionError(this.url, error);
    });
    if (!res.ok) throw apiError(res.status, text);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ConnectionError(`${method} ${target} answered ${res.status} with something that is not JSON; is ${this.url} a Stepwise API?`);
    }
  }

  /**
   * The run's events from `after` on, live, in order: reconnects with Last-Event-ID whenever the
   * stream ends or breaks (after the server's `retry` delay, with backoff while connections
   * fail), and ends after the terminal event — or when the run has ended without one.
   * Throws ApiError for a 4xx, ConnectionError when connecting keeps failing.
   */
  async *follow(runId: string, options: FollowOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
    const streamUrl = options.streamUrl ?? `${this.url}/v1/runs/${encodeURIComponent(runId)}/stream`;
    const maxFailures = options.maxFailures ?? 6;
    let lastEventId = options.after ? String(options.after) : "";
    let retryMs = DEFAULT_RETRY_MS;
    let failures = 0;

    const reconnect = async (reason: string, failed: boolean) => {
      if (failed) failures++;
      if (failures > maxFailures) throw new ConnectionError(`Lost the stream of run ${runId} and could not reconnect (${reason}).`);
      const delayMs = failed ? Math.min(retryMs * 2 ** (failures - 1), MAX_BACKOFF_MS) : retryMs;
      options.onReconnect?.({ reason, delayMs, attempt: failures, lastEventId });
      await sleep(delayMs, options.signal);
    };

    for (;;) {
      options.signal?.throwIfAborted();
      let res: Response;
      try {
        res = await fetch(streamUrl, {
          headers: { ...this.headers(), accept: "text/event-stream", "cache-control": "no-cache", ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
          signal: options.signal,
        });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        await reconnect(describeFetchError(error), true);
        continue;
      }
      if (!res.ok) {
        const text = await res.text().catch(() => "");
        const error = apiError(res.status, text);
        // Server faults and throttling are worth another try; other 4xx are final.
        if (res.status >= 500 || res.status === 429 || res.status === 408) {
          await reconnect(`${res.status} ${error.message}`, true);
          continue;
        }
        throw error;
      }
      const type = res.headers.get("content-type") ?? "";
      if (!/^text\/event-stream\b/i.test(type)) {
        await res.body?.cancel().catch(() => {});
        throw new ConnectionError(`${streamUrl} answered with ${type || "no content type"}, not an event stream.`);
      }
      failures = 0;

      const parser = new SseParser(lastEventId);
      let delivered = 0;
      let broken: string | undefined;
      try {
        if (res.body) {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            for (const item of parser.feed(chunk)) {
              if (item.kind === "retry") retryMs = item.ms;
              if (item.kind !== "event") continue;
              lastEventId = item.lastEventId;
              let event: RunEvent;
              try {
                event = JSON.parse(item.data) as RunEvent;
              } catch {
                options.onWarning?.(`Skipped a '${item.type}' frame whose data is not JSON.`);
                continue;
              }
              delivered++;
              yield event;
              if (TERMINAL_EVENTS.has(event.type)) return;
            }
          }
          parser.end();
        }
      } catch (error) {
        if (options.signal?.aborted) throw error;
        broken = describeFetchError(error);
      }
      lastEventId = parser.lastEventId;

      if (delivered === 0 && !broken) {
        // The server ends the stream of a run that ended without a terminal event; so do we.
        const run = await this.getRun(runId).catch((error) => {
          if (error instanceof ApiError) throw error;
          return undefined; // unreachable for now: reconnecting will tell
        });
        if (run && TERMINAL_STATUSES.has(run.status)) return;
      }
      await reconnect(broken ? `the connection broke: ${broken}` : "the server ended the stream", broken !== undefined);
    }
  }

  private headers(): Record<string, string> {
    return this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
  }
}

export function apiError(status: number, text: string): ApiError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
  if (error && typeof error.message === "string") {
    return new ApiError(status, typeof error.code === "string" ? error.code : `http_${status}`, error.message, error.details);
  }
  const snippet = text.trim().slice(0, 200);
  return new ApiError(status, `http_${status}`, `HTTP ${status}${snippet ? `: ${snippet}` : ""}`);
}

function connectionError(url: string, error: unknown): ConnectionError {
  return new ConnectionError(`Could not reach the Stepwise API at ${url} (${describeFetchError(error)}).`, { cause: error });
}

/** undici hides the reason in `cause`: ECONNREFUSED, ENOTFOUND, a timeout… */
export function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError") return "timed out";
  const cause = error.cause as { code?: string; message?: string } | undefined;
  // System errors say it best by code (ECONNREFUSED, ENOTFOUND); undici's own by message.
  if (cause?.code && /^E[A-Z]+$/.test(cause.code)) return cause.code;
  if (cause?.message) return cause.message;
  return error.message;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
