import type { EventBody } from "../contracts/events.js";
import type { LoopPorts, RunScope } from "./loop.js";

/** Events appended in the background (in order, by the event log), settled with the step's last writes. */
export class BackgroundEvents {
  private readonly writes: Promise<unknown>[] = [];

  constructor(private readonly run: RunScope<LoopPorts>) {}

  append(events: EventBody[]): void {
    if (events.length) this.add(this.run.ports.events.append(this.run.runId, events));
  }

  /** Another background write settled with the events (a text stream's close). */
  add(write: Promise<unknown>): void {
    this.writes.push(quietly(write));
  }

  /** Every write so far; handled now in case a write before it fails first. */
  settled(): Promise<unknown> {
    return quietly(Promise.all(this.writes));
  }
}

/**
 * A background write, awaited with the step's last writes: marked as handled now, so that if the
 * step ends with an error first, its failure cannot become an unhandled rejection that stops the process.
 */
export function quietly<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
