import type { RunEvent } from "../../shared/contracts/events.js";

// The old client typed `any`, with its own SSE parser: kept only until the files that import it move to client.ts.

/** One parsed SSE frame (a block with data), per the WHATWG event-stream rules the helper follows. */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/** A minimal Stepwise client for tests: what a user's code would do over HTTP. An empty key sends no Authorization. */
export class Client {
  constructor(
    readonly url: string,
    readonly apiKey: string,
  ) {}

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        ...this.auth(),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text; // not JSON: the test sees the raw text (and fails where it expects JSON)
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  private auth(): Record<string, string> {
    return this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
  }

  async submit(body: Record<string, unknown>) {
    const res = await this.request("POST", "/v1/runs", body);
    if (res.status !== 202) throw new Error(`submit failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { runId: string; sessionId: string; status: string; links: Record<string, string> };
  }

  async run(runId: string) {
    return (await this.request("GET", `/v1/runs/${runId}`)).body;
  }

  /** Polls until the run reaches one of the statuses. */
  async waitFor(runId: string, statuses: string[] = ["succeeded", "failed", "cancelled", "timed_out", "interrupted"], timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await this.run(runId);
      if (statuses.includes(run.status)) return run;
      if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Waits until the run has ended AND its terminal event is in the log (the status and the event
   * are two writes; either may be seen first), then returns the run and its whole event log.
   */
  async waitForEnd(runId: string, timeoutMs = 60_000): Promise<{ run: any; events: RunEvent[] }> {
    const terminal = new Set(["run.succeeded", "run.failed", "run.cancelled", "run.timed_out", "run.interrupted"]);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await this.waitFor(runId, undefined, Math.max(1, deadline - Date.now()));
      const events = await this.allEvents(runId);
      if (events.length > 0 && terminal.has(events.at(-1)!.type)) {
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
    const res = await this.request("GET", `/v1/runs/${runId}/events?after=${after}&limit=${limit}`);
    return res.body.events;
  }

  /**
   * Reads the SSE stream until it ends (or `stopAfter` frames), parsing frames per the spec.
   * `items` keeps frames and comments in the order they arrived; `closed` is true when the server
   * ended the stream (false when we stopped reading). A non-2xx answer is returned with its JSON body.
   */
  async stream(runId: string, options: { lastEventId?: string; after?: number | string; stopAfter?: number; signal?: AbortSignal } = {}) {
    const query = options.after !== undefined ? `?after=${encodeURIComponent(String(options.after))}` : "";
    const res = await fetch(`${this.url}/v1/runs/${runId}/stream${query}`, {
      headers: { ...this.auth(), ...(options.lastEventId !== undefined ? { "last-event-id": options.lastEventId } : {}) },
      signal: options.signal,
    });
    const frames: SseFrame[] = [];
    const comments: string[] = [];
    const items: ({ kind: "frame"; frame: SseFrame } | { kind: "comment"; text: string })[] = [];
    let closed = false;
    if (!res.ok) {
      const text = await res.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the text
      }
      return { status: res.status, headers: res.headers, frames, comments, items, closed: true, body };
    }
    if (!res.body) return { status: res.status, headers: res.headers, frames, comments, items, closed: true, body: undefined };
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    outer: for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        closed = true;
        break;
      }
      buffer += value;
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: { id?: string; event?: string; data: string } = { data: "" };
        let hasData = false;
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) {
            comments.push(line.slice(1).trim());
            items.push({ kind: "comment", text: line.slice(1).trim() });
          } else if (line.startsWith("id:")) frame.id = line.slice(3).trim();
          else if (line.startsWith("event:")) frame.event = line.slice(6).trim();
          else if (line.startsWith("data:")) {
            frame.data += (hasData ? "\n" : "") + line.slice(5).trimStart();
            hasData = true;
          }
        }
        if (hasData) {
          frames.push(frame);
          items.push({ kind: "frame", frame });
        }
        if (options.stopAfter && frames.length >= options.stopAfter) {
          await reader.cancel();
          break outer;
        }
      }
    }
    return { status: res.status, headers: res.headers, frames, comments, items, closed, body: undefined };
  }

  /** A person's decision on an interrupt: `POST /v1/runs/{id}/interrupts/{interruptId}`; any answer is returned as is. */
  async decide(runId: string, interruptId: string, body: unknown) {
    return this.request("POST", `/v1/runs/${runId}/interrupts/${interruptId}`, body);
  }

  /**
   * Polls until the run waits for a person on at least `count` interrupts: that many pending, each
   * announced by its `interrupt.opened` event, and the status awaiting_input (the interrupt, the event
   * and the status are separate writes; any may be seen first). Fails at once if the run ends.
   * Returns the run and its whole event log as they were then; `pending` is in creation (event) order.
   */
  async waitForPending(runId: string, count = 1, timeoutMs = 30_000): Promise<{ run: any; events: RunEvent[]; pending: any[] }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await this.run(runId);
      if (["succeeded", "failed", "cancelled", "timed_out"].includes(run.status)) {
        throw new Error(`run ${runId} ended ${run.status} while waiting for ${count} pending interrupt(s): ${JSON.stringify(run.error)}`);
      }
      if (run.status === "awaiting_input" && run.pendingInterrupts.length >= count) {
        const events = await this.allEvents(runId);
        const opened = events.flatMap((e) => (e.type === "interrupt.opened" ? [e.data.interruptId] : []));
        const byId = new Map<string, any>(run.pendingInterrupts.map((i: any) => [i.interruptId, i]));
        if ([...byId.keys()].every((id) => opened.includes(id))) {
          const pending = opened.filter((id) => byId.has(id)).map((id) => byId.get(id));
          return { run, events, pending };
        }
      }
      if (Date.now() > deadline) {
        throw new Error(
          `run ${runId} is ${run.status} with ${run.pendingInterrupts.length} pending interrupt(s) after ${timeoutMs} ms, not ${count}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
