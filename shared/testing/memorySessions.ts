import type { SessionClaim, SessionMessage, SessionRuns, Sessions } from "../ports/sessions.js";
import { stored } from "./clone.js";

type Turn = { turn: number; runId: string; messages?: { role: "user" | "assistant"; content: string }[]; rolledBack?: boolean; at: string };
type Session = { activeRunId?: string; waiting: string[]; turnCount: number; turns: Turn[]; title?: string };

/** The sessions port in memory: one active run per session, a queue, turns by number. */
export class MemorySessions implements Sessions {
  readonly sessions = new Map<string, Session>();

  private session(tenantId: string, sessionId: string): Session {
    const id = `${tenantId}|${sessionId}`;
    const session = this.sessions.get(id) ?? { waiting: [], turnCount: 0, turns: [] };
    this.sessions.set(id, session);
    return session;
  }

  async claim(tenantId: string, sessionId: string, runId: string, options: { queue: boolean }): Promise<SessionClaim> {
    const session = this.session(tenantId, sessionId);
    if (!session.activeRunId || session.activeRunId === runId) {
      if (!session.activeRunId) session.turnCount++;
      session.activeRunId = runId;
      return { outcome: "active", turn: session.turnCount };
    }
    if (!options.queue) return { outcome: "busy", activeRunId: session.activeRunId };
    const behind = session.waiting.at(-1) ?? session.activeRunId;
    session.waiting.push(runId);
    return { outcome: "queued", turn: ++session.turnCount, activeRunId: session.activeRunId, behind, position: session.waiting.length };
  }

  async release(tenantId: string, sessionId: string, runId: string): Promise<SessionRuns> {
    const session = this.session(tenantId, sessionId);
    if (session.activeRunId === runId) session.activeRunId = session.waiting.shift();
    else session.waiting = session.waiting.filter((id) => id !== runId);
    return this.runs(tenantId, sessionId);
  }

  async runs(tenantId: string, sessionId: string): Promise<SessionRuns> {
    const { activeRunId, waiting } = this.session(tenantId, sessionId);
    return { activeRunId, waiting: [...waiting] };
  }

  async appendTurn(
    tenantId: string,
    sessionId: string,
    runId: string,
    turn: number,
    messages: { role: "user" | "assistant"; content: string }[],
  ): Promise<void> {
    const session = this.session(tenantId, sessionId);
    const existing = session.turns.find((t) => t.turn === turn);
    if (existing && (existing.runId !== runId || existing.rolledBack)) return;
    session.turns = [...session.turns.filter((t) => t.turn !== turn), { turn, runId, messages, at: new Date().toISOString() }].sort(
      (a, b) => a.turn - b.turn,
    );
  }

  async removeTurn(tenantId: string, sessionId: string, runId: string, turn: number): Promise<void> {
    const session = this.session(tenantId, sessionId);
    session.turns = [...session.turns.filter((t) => t.turn !== turn), { turn, runId, rolledBack: true, at: new Date().toISOString() }].sort(
      (a, b) => a.turn - b.turn,
    );
  }

  async messages(tenantId: string, sessionId: string): Promise<SessionMessage[]> {
    const turns = this.sessions.get(`${tenantId}|${sessionId}`)?.turns ?? [];
    const all = turns.filter((t) => !t.rolledBack).flatMap((t) => (t.messages ?? []).map((m) => ({ ...m, runId: t.runId, at: t.at })));
    return stored(all.map((m, i) => ({ seq: i + 1, ...m })));
  }

  async title(tenantId: string, sessionId: string): Promise<string | undefined> {
    return this.sessions.get(`${tenantId}|${sessionId}`)?.title;
  }

  async setTitle(tenantId: string, sessionId: string, title: string): Promise<boolean> {
    const session = this.sessions.get(`${tenantId}|${sessionId}`);
    if (!session || session.title !== undefined) return false;
    session.title = title;
    return true;
  }

  async delete(tenantId: string, sessionId: string): Promise<boolean> {
    return this.sessions.delete(`${tenantId}|${sessionId}`);
  }
}
