import type { AgentRole, EventBody } from "../contracts/events.js";
import type { Ports } from "../ports/index.js";
import type { ChatRequest } from "../llm/types.js";

type Source = { agent: AgentRole; taskId?: string };

/** A placeholder's beginning at the end of a text ("[", "[ur", "[url:1"): held back until it is whole. */
const PARTIAL_PLACEHOLDER = /\[(?:u(?:r(?:l(?::\d*)?)?)?)?$/;

/**
 * Text deltas from a streaming model, coalesced into `agent.delta` (or `agent.reasoning`) events a
 * few times a second: clients see text as it is written, and the event log is not written once
 * per token. With `restore`, what is written is what a person reads: `[url:N]` placeholders are
 * put back (one split across deltas is held back until it is whole).
 */
export class DeltaCoalescer {
  private buffer = "";
  private timer?: NodeJS.Timeout;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly source: Source,
    private readonly append: (events: EventBody[]) => Promise<unknown>,
    private readonly options: { type?: "agent.delta" | "agent.reasoning"; restore?: (text: string) => string; intervalMs?: number } = {},
  ) {}

  push = (text: string): void => {
    this.buffer += text;
    this.timer ??= setTimeout(() => this.flush(false), this.options.intervalMs ?? 300);
  };

  /** Writes what is buffered; resolves when every write so far has finished. */
  async close(): Promise<void> {
    this.flush(true);
    await this.writes;
  }

  private flush(final: boolean): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    let text = this.buffer;
    const held = final || !this.options.restore ? "" : (PARTIAL_PLACEHOLDER.exec(text)?.[0] ?? "");
    text = text.slice(0, text.length - held.length);
    this.buffer = held;
    if (held) this.timer = setTimeout(() => this.flush(false), this.options.intervalMs ?? 300);
    if (!text) return;
    const event = { type: this.options.type ?? "agent.delta", data: { ...this.source, text: this.options.restore ? this.options.restore(text) : text } } as EventBody;
    this.writes = this.writes.then(() => this.append([event])).catch(() => undefined); // progress text is best effort
  }
}

/** The handlers of one streamed model call, and the end of its event writes. */
export interface TextStream extends Required<Pick<ChatRequest, "onText" | "onReasoning">> {
  /** Writes what is buffered; resolves when every event of the call was written. */
  close(): Promise<void>;
}

/**
 * Streams a model call's text to clients as `agent.delta` events of `source` (placeholders
 * restored with `restore`) and its reasoning — models that think aloud — as `agent.reasoning`
 * events, which are shown to people but never kept in memory or sent back to a model.
 */
export function textStream(ports: Pick<Ports, "events">, runId: string, source: Source, restore?: (text: string) => string): TextStream {
  const append = (events: EventBody[]) => ports.events.append(runId, events);
  const deltas = new DeltaCoalescer(source, append, { restore });
  const reasoning = new DeltaCoalescer(source, append, { type: "agent.reasoning" });
  return {
    onText: deltas.push,
    onReasoning: reasoning.push,
    close: () => Promise.all([deltas.close(), reasoning.close()]).then(() => undefined),
  };
}
