import type { RunEvent } from "../../shared/contracts/events.js";

/**
 * Events from the stream reader to the consumer; the consumer may be busy with a prompt. Watchers
 * see each event as it arrives, so a prompt can stop when its interrupt is decided elsewhere.
 */
export class EventQueue {
  private readonly items: RunEvent[] = [];
  private waiter: (() => void) | undefined;
  private closed = false;
  private error: unknown;
  private readonly watchers = new Set<(event: RunEvent) => void>();

  push(event: RunEvent) {
    this.items.push(event);
    for (const watcher of this.watchers) watcher(event);
    this.wake();
  }

  close(error?: unknown) {
    this.closed = true;
    this.error = error;
    this.wake();
  }

  has(predicate: (event: RunEvent) => boolean): boolean {
    return this.items.some(predicate);
  }

  /** Calls `watcher` with every event pushed from now on; returns the unsubscribe. */
  watch(watcher: (event: RunEvent) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** The next event; undefined once closed and drained; throws the error it was closed with. */
  async next(): Promise<RunEvent | undefined> {
    for (;;) {
      if (this.items.length > 0) return this.items.shift();
      if (this.closed) {
        if (this.error) throw this.error;
        return undefined;
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  private wake() {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}
