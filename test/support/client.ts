import { StepwiseClient } from "../../shared/apiClient/client.js";
import { readEventStreamItems } from "../../shared/apiClient/eventStream.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { CreateRunResponse, InterruptView, RunView } from "../../shared/contracts/responses.js";
import { TERMINAL_EVENTS, TERMINAL_STATUSES } from "../../shared/contracts/terminal.js";

/** One event of a stream: the block's own `id` and `event` fields (those it has) and its data. */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/** The run events a stream's frames carry, parsed. */
export const eventsOf = (frames: SseFrame[]): RunEvent[] => frames.map((frame) => JSON.parse(frame.data) as RunEvent);

/** The API's error answer: `{error: {code, message}}`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** An HTTP answer as a test sees it: the status, the headers and the parsed JSON body (the raw text when not JSON). */
export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
}

const ENDED: string[] = [...TERMINAL_STATUSES];

/**
 * The tests' client: the product's typed client (`api`) for what succeeds, plus raw answers
 * (`request`, `decide`, `stream`) where a test asserts a status or an error body, and the waits
 * the tests share. An empty key sends no Authorization.
 */
export class Client {
  readonly api: StepwiseClient;

  constructor(
    readonly url: string,
    readonly apiKey: string,
  ) {
    this.api = new StepwiseClient(url, apiKey || undefined);
  }

  /** Any request; the answer whatever its status. `T` is the body the test expects. */
  async request<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        ...this.auth(),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await bodyOf(res)) as T };
  }

  private auth(): Record<string, string> {
    return this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
  }

  async submit(body: Record<string, unknown>): Promise<CreateRunResponse> {
    const res = await this.request<CreateRunResponse>("POST", "/v1/runs", body);
    if (res.status !== 202) throw new Error(`submit failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  run(runId: string): Promise<RunView> {
    return this.api.getRun(runId);
  }

  /** Polls until the run reaches one of the statuses. */
  async waitFor(runId: string, statuses: string[] = ENDED, timeoutMs = 30_000): Promise<RunView> {
    const deadline = Date.now() + timeoutMs;
    let pause = FIRST_POLL_PAUSE_MS;
    for (;;) {
      const run = await this.run(runId);
      if (statuses.includes(run.status)) return run;
      if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status} after ${timeoutMs} ms`);
      pause = await pauseBeforeNextPoll(pause);
    }
  }

  /**
   * Waits until the run has ended AND its terminal event is in the log (the status and the event
   * are two writes; either may be seen first), then returns the run and its whole event log.
   */
  async waitForEnd(runId: string, timeoutMs = 60_000): Promise<{ run: RunView; events: RunEvent[] }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await this.waitFor(runId, undefined, Math.max(1, deadline - Date.now()));
      const events = await this.allEvents(runId);
      const last = events.at(-1);
      if (last && TERMINAL_EVENTS.has(last.type)) {
        // Re-read the run: anything it reports now was written before the terminal event was read.
        return { run: await this.run(runId), events };
      }
      if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status} but its log has no terminal event after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The whole event log, following `next.after` page by page. */
  async allEvents(runId: string): Promise<RunEvent[]> {
    const all: RunEvent[] = [];
    for (;;) {
      const page = await this.events(runId, all.at(-1)?.seq ?? 0, 500);
      if (page.length === 0) return all;
      all.push(...page);
    }
  }

  async events(runId: string, after = 0, limit = 500): Promise<RunEvent[]> {
    return (await this.api.listEvents(runId, { after, limit })).events;
  }

  /**
   * Reads the run's SSE stream with the client's own reader until it ends (or `stopAfter` events).
   * `items` keeps events and comments in the order they arrived; `closed` is true when the server
   * ended the stream (false when we stopped reading). A non-2xx answer is returned with its JSON body.
   */
  async stream(runId: string, options: { lastEventId?: string; after?: number | string; stopAfter?: number; signal?: AbortSignal } = {}) {
    const query = options.after !== undefined ? `?after=${encodeURIComponent(String(options.after))}` : "";
    const res = await this.api.openStream(runId, `${this.url}/v1/runs/${runId}/stream${query}`, options.lastEventId ?? "", options.signal);
    const frames: SseFrame[] = [];
    const comments: string[] = [];
    const items: ({ kind: "frame"; frame: SseFrame } | { kind: "comment"; text: string })[] = [];
    if (!res.ok || !res.body) {
      const body = res.ok ? undefined : ((await bodyOf(res)) as ErrorBody);
      return { status: res.status, headers: res.headers, frames, comments, items, closed: true, body };
    }
    let closed = true;
    for await (const item of readEventStreamItems(res.body, { lastEventId: options.lastEventId ?? "" })) {
      if (item.kind === "comment") {
        comments.push(item.text.trim());
        items.push({ kind: "comment", text: item.text.trim() });
        continue;
      }
      const frame: SseFrame = { ...item.fields, data: item.message.data };
      frames.push(frame);
      items.push({ kind: "frame", frame });
      if (options.stopAfter && frames.length >= options.stopAfter) {
        closed = false; // leaving the loop cancels the body, which closes the connection
        break;
      }
    }
    return { status: res.status, headers: res.headers, frames, comments, items, closed, body: undefined };
  }

  /** A person's decision on an interrupt: `POST /v1/runs/{id}/interrupts/{interruptId}`; any answer is returned as is. */
  async decide<T = InterruptView>(runId: string, interruptId: string, body: unknown): Promise<Answer<T>> {
    return this.request<T>("POST", `/v1/runs/${runId}/interrupts/${interruptId}`, body);
  }

  /**
   * Polls until the run waits for a person on at least `count` interrupts: that many pending, each
   * announced by its `interrupt.opened` event, and the status awaiting_input (the interrupt, the event
   * and the status are separate writes; any may be seen first). Fails at once if the run ends.
   * Returns the run and its whole event log as they were then; `pending` is in creation (event) order.
   */
  async waitForPending(
    runId: string,
    count = 1,
    timeoutMs = 30_000,
  ): Promise<{ run: RunView; events: RunEvent[]; pending: InterruptView[] }> {
    const deadline = Date.now() + timeoutMs;
    let pause = FIRST_POLL_PAUSE_MS;
    for (;;) {
      const run = await this.run(runId);
      if (["succeeded", "failed", "cancelled", "timed_out"].includes(run.status)) {
        throw new Error(`run ${runId} ended ${run.status} while waiting for ${count} pending interrupt(s): ${JSON.stringify(run.error)}`);
      }
      if (run.status === "awaiting_input" && run.pendingInterrupts.length >= count) {
        const events = await this.allEvents(runId);
        const opened = events.flatMap((e) => (e.type === "interrupt.opened" ? [e.data.interruptId] : []));
        const byId = new Map(run.pendingInterrupts.map((i) => [i.interruptId, i]));
        if ([...byId.keys()].every((id) => opened.includes(id))) {
          const pending = opened.flatMap((id) => byId.get(id) ?? []);
          return { run, events, pending };
        }
      }
      if (Date.now() > deadline) {
        throw new Error(
          `run ${runId} is ${run.status} with ${run.pendingInterrupts.length} pending interrupt(s) after ${timeoutMs} ms, not ${count}`,
        );
      }
      pause = await pauseBeforeNextPoll(pause);
    }
  }
}

/**
 * Polls start 50 ms apart and space out to half a second: each poll is a request the stack answers
 * from the table (about 8 ms of its CPU), and the suite is bound by its two cores. A run that ends
 * at once is seen at once; one that takes seconds is read a few times a second, not ten.
 */
const FIRST_POLL_PAUSE_MS = 50;
const LAST_POLL_PAUSE_MS = 500;
async function pauseBeforeNextPoll(pause: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, pause));
  return Math.min(pause * 1.5, LAST_POLL_PAUSE_MS);
}

/** The answer's JSON body; its text when it is not JSON (the test then fails where it expects JSON); undefined when empty. */
async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}
