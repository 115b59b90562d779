import type { SessionMessage, Sessions } from "../ports/sessions.js";
import { stored } from "./clone.js";

/** The sessions port in memory: a run's turn is appended once. */
export class MemorySessions implements Sessions {
  readonly sessions = new Map<string, SessionMessage[]>();

  async appendTurn(tenantId: string, sessionId: string, runId: string, turn: { role: "user" | "assistant"; content: string }[]): Promise<void> {
    const messages = this.sessions.get(`${tenantId}|${sessionId}`) ?? [];
    if (messages.some((m) => m.runId === runId)) return;
    const at = new Date().toISOString();
    messages.push(...turn.map((m, i) => ({ seq: messages.length + i + 1, ...m, runId, at })));
    this.sessions.set(`${tenantId}|${sessionId}`, messages);
  }

  async messages(tenantId: string, sessionId: string): Promise<SessionMessage[]> {
    return stored(this.sessions.get(`${tenantId}|${sessionId}`) ?? []);
  }

  async delete(tenantId: string, sessionId: string): Promise<boolean> {
    return this.sessions.delete(`${tenantId}|${sessionId}`);
  }
}
