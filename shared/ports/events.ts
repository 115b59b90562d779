import type { EventBody, RunEvent } from "../contracts/events.js";

/** The log's last sequence number taken (its event may still be on its way), and whether the terminal event has closed it. */
export interface LogTip {
  seq: number;
  closed: boolean;
}

/**
 * The events port: one gap-free sequence per run (numbers 1, 2, … with no holes as readers see
 * them, also when many writers race or one stops half-way), closed by the terminal event (later
 * appends are dropped, answering []).
 * Adapter: EventLog (DynamoDB); fake: shared/testing/memoryEvents.ts.
 */
export interface RunEvents {
  /**
   * Appends after the events already there, in order; [] once the log is closed. With a `key`, the
   * append happens once per run: one with a key the log has taken already answers [] (a write
   * tool's `file.created`, announced again by a call retried after a crash). `reopen`: write even
   * after the terminal event (a failed run resumed); the log is open again.
   */
  append(runId: string, bodies: EventBody[], options?: { close?: boolean; key?: string; reopen?: boolean }): Promise<RunEvent[]>;
  tip(runId: string): Promise<LogTip>;
  /** Events with seq greater than `after`, in order. */
  list(runId: string, after?: number, limit?: number): Promise<RunEvent[]>;
}
