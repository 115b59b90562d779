import type { EventBody } from "../contracts/events.js";

/**
 * Text deltas from a streaming model, coalesced into `agent.delta` events a few times a second:
 * clients see text as it is written, and the event log is not written once per token.
 */
export class DeltaCoalescer {
  private buffer = "";
  private timer?: NodeJS.Timeout;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly source: { agent: Extract<EventBody, { type: "agent.delta" }>["data"]["agent"]; taskId?: string },
    private readonly append: (events: EventBody[]) => Promise<unknown>,
    private readonly intervalMs = 300,
  ) {}

  push = (text: string): void => {
    this.buffer += text;
    this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  };

  /** Writes what is buffered; resolves when every write so far has finished. */
  async close(): Promise<void> {
    this.flush();
    await this.writes;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.buffer) return;
    const text = this.buffer;
    this.buffer = "";
    const event: EventBody = { type: "agent.delta", data: { ...this.source, text } };
    this.writes = this.writes.then(() => this.append([event])).catch(() => undefined); // progress text is best effort
  }
}
