/** One turn of a multi-turn conversation, across runs. */
export interface SessionMessage {
  seq: number;
  role: "user" | "assistant";
  content: string;
  runId: string;
  at: string;
}

/** Who has the session: the run in flight, and the runs waiting for it, in submission order. */
export interface SessionRuns {
  activeRunId?: string;
  waiting: string[];
}

/** What claiming the session gave a new run: it runs now, it waits (queued), or the session is busy. */
export type SessionClaim =
  | { outcome: "active"; turn: number }
  | { outcome: "queued"; turn: number; activeRunId: string; behind: string; position: number }
  | { outcome: "busy"; activeRunId: string };

/**
 * The sessions port: a tenant's conversations across runs, and who may run in them. One run is
 * active per session; others wait in a queue, in submission order. Each run takes a turn number
 * when it claims the session, and its turn (request and answer) is written whole under that
 * number, so the conversation reads in the order people spoke. Adapter: SessionStore (DynamoDB);
 * fake: shared/testing/memorySessions.ts.
 */
export interface Sessions {
  /**
   * Makes the run the session's active run if it has none; else queues it last when `queue`, or
   * reports the session busy. One conditional write, so racing submits from any number of
   * containers obey it. `newSession`: the submit made the session up (it has no earlier turns).
   */
  claim(tenantId: string, sessionId: string, runId: string, options: { queue: boolean; newSession?: boolean }): Promise<SessionClaim>;
  /**
   * The run is done with the session: if active, the first waiting run becomes active (the session
   * is idle when none waits); if waiting, it leaves the queue. Safe to repeat. Returns who has it now.
   */
  release(tenantId: string, sessionId: string, runId: string): Promise<SessionRuns>;
  runs(tenantId: string, sessionId: string): Promise<SessionRuns>;
  /**
   * Writes the run's turn whole (all messages or none) under its turn number; not once the run has
   * been cancelled (a rolled-back turn never comes back). Safe to repeat.
   */
  appendTurn(
    tenantId: string,
    sessionId: string,
    runId: string,
    turn: number,
    messages: { role: "user" | "assistant"; content: string }[],
  ): Promise<void>;
  /** Removes the run's turn (rollback), and keeps it out if the run writes it later. */
  removeTurn(tenantId: string, sessionId: string, runId: string, turn: number): Promise<void>;
  messages(tenantId: string, sessionId: string): Promise<SessionMessage[]>;
  /** The session's title (made after its first answered turn), if it has one. */
  title(tenantId: string, sessionId: string): Promise<string | undefined>;
  /** Names the session, once: false if it has a title already, or no longer exists. */
  setTitle(tenantId: string, sessionId: string, title: string): Promise<boolean>;
  delete(tenantId: string, sessionId: string): Promise<boolean>;
}
