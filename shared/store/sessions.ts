import type { SessionClaim, SessionMessage, SessionRuns, Sessions } from "../ports/sessions.js";
import { keys } from "./keys.js";
import { expiresAt, ifConditionHolds, type Table } from "./table.js";

type Message = { role: "user" | "assistant"; content: string };
type TurnItem = { runId: string; exchange?: Message[]; rolledBack?: boolean; at: string };
type LegacyMessage = SessionMessage & { pk: string; sk: string };

/** How often a claim or release retries when another container changed the session in between. */
const MAX_ATTEMPTS = 20;

/**
 * The session's record (`META`: the active run, the queue, the turn counter) and its turns, one
 * item each (`TURN#n`: request and answer in one item, so a turn is written whole or not at all).
 * Every change of who runs is a conditional write on `META`, made against what was just read.
 */
export class SessionStore implements Sessions {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  async claim(
    tenantId: string,
    sessionId: string,
    runId: string,
    options: { queue: boolean; newSession?: boolean },
  ): Promise<SessionClaim> {
    const key = keys.session(tenantId, sessionId);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const meta = options.newSession && attempt === 0 ? undefined : await this.meta(tenantId, sessionId);
      const now = new Date().toISOString();
      const stamp = { updatedAt: now, ttl: expiresAt(this.retentionDays) };
      if (!meta?.activeRun) {
        // Nobody runs: this run does, if nobody took the session since it was read.
        const set = await this.table.setIf(
          key,
          { activeRun: runId, waiting: [], ...stamp },
          { expression: "attribute_not_exists(activeRun)", values: { ":zero": 0, ":one": 1, ":now": now } },
          ["turnCount = if_not_exists(turnCount, :zero) + :one", "createdAt = if_not_exists(createdAt, :now)"],
        );
        if (set) return { outcome: "active", turn: Number(set.turnCount) };
        continue;
      }
      if (meta.activeRun === runId) return { outcome: "active", turn: Number(meta.turnCount) };
      if (!options.queue) return { outcome: "busy", activeRunId: meta.activeRun };
      const waiting = meta.waiting ?? [];
      // Last in the queue, if the queue is still as read (else read again).
      const set = await this.table.setIf(
        key,
        stamp,
        {
          expression: "activeRun = :active AND size(waiting) = :length",
          values: { ":active": meta.activeRun, ":length": waiting.length, ":me": [runId], ":one": 1 },
        },
        ["waiting = list_append(waiting, :me)", "turnCount = turnCount + :one"],
      );
      if (set)
        return {
          outcome: "queued",
          turn: Number(set.turnCount),
          activeRunId: meta.activeRun,
          behind: waiting.at(-1) ?? meta.activeRun,
          position: waiting.length + 1,
        };
    }
    throw new Error(`session ${sessionId} changed ${MAX_ATTEMPTS} times while a run claimed it`);
  }

  async release(tenantId: string, sessionId: string, runId: string): Promise<SessionRuns> {
    const key = keys.session(tenantId, sessionId);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const meta = await this.meta(tenantId, sessionId);
      const waiting = meta?.waiting ?? [];
      const current = { activeRunId: meta?.activeRun, waiting };
      const place = waiting.indexOf(runId);
      const now = { updatedAt: new Date().toISOString() };
      if (meta?.activeRun === runId) {
        // The first waiting run takes over; with none, the session is idle.
        const [next, ...rest] = waiting;
        const done = next
          ? await this.table.setIf(
              key,
              { activeRun: next, waiting: rest, ...now },
              { expression: "activeRun = :me AND size(waiting) = :length", values: { ":me": runId, ":length": waiting.length } },
            )
          : await this.remove(key, "activeRun", "activeRun = :me AND size(waiting) = :zero", { ":me": runId, ":zero": 0 });
        if (done) return { activeRunId: next, waiting: rest };
      } else if (place >= 0) {
        const rest = waiting.filter((id) => id !== runId);
        const done = await this.table.setIf(
          key,
          { waiting: rest, ...now },
          { expression: "size(waiting) = :length AND contains(waiting, :me)", values: { ":me": runId, ":length": waiting.length } },
        );
        if (done) return { activeRunId: meta?.activeRun, waiting: rest };
      } else {
        return current;
      }
    }
    throw new Error(`session ${sessionId} changed ${MAX_ATTEMPTS} times while run ${runId} released it`);
  }

  async runs(tenantId: string, sessionId: string): Promise<SessionRuns> {
    const meta = await this.meta(tenantId, sessionId);
    return { activeRunId: meta?.activeRun, waiting: meta?.waiting ?? [] };
  }

  async appendTurn(tenantId: string, sessionId: string, runId: string, turn: number, messages: Message[]): Promise<void> {
    await ifConditionHolds(
      this.table.putItem({
        Item: {
          ...keys.sessionTurn(tenantId, sessionId, turn),
          runId,
          exchange: messages,
          at: new Date().toISOString(),
          ttl: expiresAt(this.retentionDays),
        },
        ConditionExpression: "attribute_not_exists(pk) OR (runId = :run AND attribute_not_exists(rolledBack))",
        ExpressionAttributeValues: { ":run": runId },
      }),
    );
  }

  async removeTurn(tenantId: string, sessionId: string, runId: string, turn: number): Promise<void> {
    // A marker in the turn's place: a late write of the cancelled run's answer cannot bring it back.
    await this.table.putItem({
      Item: {
        ...keys.sessionTurn(tenantId, sessionId, turn),
        runId,
        rolledBack: true,
        at: new Date().toISOString(),
        ttl: expiresAt(this.retentionDays),
      },
    });
  }

  /** The conversation: messages written before turns were numbered, then the turns in submission order. */
  async messages(tenantId: string, sessionId: string): Promise<SessionMessage[]> {
    const pk = keys.sessionPk(tenantId, sessionId);
    const [legacy, turns] = await Promise.all([
      this.table.queryPrefix<LegacyMessage>(pk, keys.sessionMessagePrefix),
      this.table.queryPrefix<TurnItem>(pk, keys.sessionTurnPrefix),
    ]);
    const all = [
      ...legacy.map(({ role, content, runId, at }) => ({ role, content, runId, at })),
      ...turns.filter((t) => !t.rolledBack).flatMap((t) => (t.exchange ?? []).map((m) => ({ ...m, runId: t.runId, at: t.at }))),
    ];
    return all.map((m, i) => ({ seq: i + 1, ...m }));
  }

  async title(tenantId: string, sessionId: string): Promise<string | undefined> {
    return (await this.meta(tenantId, sessionId))?.title;
  }

  async setTitle(tenantId: string, sessionId: string, title: string): Promise<boolean> {
    // On the session's record, which the sessions listing reads too; never over an earlier title.
    const set = await this.table.setIf(
      keys.session(tenantId, sessionId),
      { title },
      { expression: "attribute_exists(pk) AND attribute_not_exists(title)" },
    );
    return set !== undefined;
  }

  /** Forgets the session: every turn and its record. Returns whether there was anything. */
  async delete(tenantId: string, sessionId: string): Promise<boolean> {
    const items = await this.table.queryPrefix<{ pk: string; sk: string }>(keys.sessionPk(tenantId, sessionId), "");
    await this.table.batchWrite(items.map(({ pk, sk }) => ({ DeleteRequest: { Key: { pk, sk } } })));
    return items.length > 0;
  }

  private async meta(
    tenantId: string,
    sessionId: string,
  ): Promise<{ activeRun?: string; waiting?: string[]; turnCount?: number; title?: string } | undefined> {
    const { Item } = await this.table.getItem({ Key: keys.session(tenantId, sessionId), ConsistentRead: true });
    return Item as { activeRun?: string; waiting?: string[]; turnCount?: number; title?: string } | undefined;
  }

  private async remove(
    key: { pk: string; sk: string },
    attribute: string,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    const written = await ifConditionHolds(
      this.table.updateItem({
        Key: key,
        UpdateExpression: `REMOVE ${attribute} SET updatedAt = :now`,
        ConditionExpression: condition,
        ExpressionAttributeValues: { ...values, ":now": new Date().toISOString() },
      }),
    );
    return written !== undefined;
  }
}
