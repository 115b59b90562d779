/** One turn of a multi-turn conversation, across runs. */
export interface SessionMessage {
  seq: number;
  role: "user" | "assistant";
  content: string;
  runId: string;
  at: string;
}

/**
 * The sessions port: a tenant's conversations across runs. A run's turn is appended once (the run
 * id makes it idempotent). Adapter: SessionStore (DynamoDB); fake: shared/testing/memorySessions.ts.
 */
export interface Sessions {
  appendTurn(tenantId: string, sessionId: string, runId: string, turn: { role: "user" | "assistant"; content: string }[], options?: { first?: boolean }): Promise<void>;
  messages(tenantId: string, sessionId: string): Promise<SessionMessage[]>;
  delete(tenantId: string, sessionId: string): Promise<boolean>;
}
