import { EventBody, type RunEvent } from "../contracts/events.js";
import { TERMINAL_EVENTS } from "../contracts/terminal.js";
import type { LogTip, RunEvents } from "../ports/events.js";
import { stored } from "./clone.js";

/** The events port in memory: one gap-free sequence per run, closed by the terminal event. */
export class MemoryEvents implements RunEvents {
  readonly logs = new Map<string, { events: RunEvent[]; closed: boolean; keys: Set<string> }>();

  async append(runId: string, bodies: EventBody[], options: { close?: boolean; key?: string; reopen?: boolean } = {}): Promise<RunEvent[]> {
    const valid = bodies.map((body) => EventBody.parse(body));
    const log = this.log(runId);
    if (valid.length === 0 || (log.closed && !options.reopen)) return [];
    if (options.key !== undefined) {
      if (log.keys.has(options.key)) return [];
      log.keys.add(options.key);
    }
    if (options.reopen) log.closed = false;
    const at = new Date().toISOString();
    const appended = valid.map((body, i) => ({ ...stored(body), seq: log.events.length + i + 1, at }) as RunEvent);
    log.events.push(...appended);
    const lastType = appended.at(-1)?.type;
    if (options.close || (lastType !== undefined && TERMINAL_EVENTS.has(lastType))) log.closed = true;
    return stored(appended);
  }

  async tip(runId: string): Promise<LogTip> {
    const log = this.log(runId);
    return { seq: log.events.length, closed: log.closed || TERMINAL_EVENTS.has(log.events.at(-1)?.type ?? "") };
  }

  async list(runId: string, after = 0, limit = 100): Promise<RunEvent[]> {
    return stored(
      this.log(runId)
        .events.filter((e) => e.seq > after)
        .slice(0, limit),
    );
  }

  /** Every event of the run, in order (for assertions). */
  all(runId: string): RunEvent[] {
    return stored(this.log(runId).events);
  }

  private log(runId: string) {
    const log = this.logs.get(runId) ?? { events: [], closed: false, keys: new Set() };
    this.logs.set(runId, log);
    return log;
  }
}
