/** A placeholder's beginning at the end of a text ("[", "[ur", "[url:1"): held back until it is whole. */
const PARTIAL_PLACEHOLDER = /\[(?:u(?:r(?:l(?::\d*)?)?)?)?$/;

/**
 * Text deltas from a streaming model, coalesced into one write a few times a second (an
 * `agent.delta`, `agent.reasoning` or `report.delta` event): clients see text as it is written, and
 * the event log is not written once per token. With `restore`, what is written is what a person
 * reads: `[url:N]` placeholders are put back (one split across deltas is held back until it is whole).
 */
export class DeltaCoalescer {
  private buffer = "";
  private timer?: NodeJS.Timeout;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    /** Writes one coalesced piece of text (as an event); its failure is ignored (progress text is best effort). */
    private readonly write: (text: string) => unknown,
    private readonly options: { restore?: (text: string) => string; intervalMs?: number } = {},
  ) {}

  /** Text was pushed since the start or the last discard. */
  private pushed = false;

  push = (text: string): void => {
    this.pushed ||= text !== "";
    this.buffer += text;
    this.timer ??= setTimeout(() => this.flush(false), this.options.intervalMs ?? 300);
  };

  /** Writes what is buffered; resolves when every write so far has finished. */
  async close(): Promise<void> {
    this.flush(true);
    await this.writes;
  }

  /**
   * Forgets the text not written yet (the reply it came from is void) and says whether any text was
   * pushed since the start or the last discard; `written` resolves once what was written is.
   */
  discard(): { pushed: boolean; written: Promise<unknown> } {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.buffer = "";
    const pushed = this.pushed;
    this.pushed = false;
    return { pushed, written: this.writes };
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
    const restored = this.options.restore ? this.options.restore(text) : text;
    this.writes = this.writes.then(() => this.write(restored)).catch(() => undefined); // progress text is best effort
  }
}
