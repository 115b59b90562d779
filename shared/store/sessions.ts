import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { SessionMessage, Sessions } from "../ports/sessions.js";
import { expiresAt, type Table } from "./table.js";

export type { SessionMessage } from "../ports/sessions.js";

/** Sessions are scoped by tenant: two tenants choosing the same session id never meet. */
const pk = (tenantId: string, sessionId: string) => `SESSION#${tenantId}#${sessionId}`;
const pad = (n: number) => String(n).padStart(8, "0");

export class SessionStore implements Sessions {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  /** Appends a run's turn (the question and the answer) once: the run id makes it idempotent. */
  async appendTurn(
    tenantId: string,
    sessionId: string,
    runId: string,
    turn: { role: "user" | "assistant"; content: string }[],
    /**
     * The session was created for this run (its first turn): the turn takes numbers 1… and the
     * counter is set, all in one batch, which a retry simply writes again.
     */
    options: { first?: boolean } = {},
  ): Promise<void> {
    if (options.first) return this.writeFirstTurn(tenantId, sessionId, runId, turn);
    const existing = await this.messages(tenantId, sessionId);
    if (existing.some((m) => m.runId === runId)) return;
    const counter = await this.table.doc.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: { pk: pk(tenantId, sessionId), sk: "META" },
        UpdateExpression: "ADD messageSeq :n SET updatedAt = :now, createdAt = if_not_exists(createdAt, :now), #ttl = :ttl",
        ExpressionAttributeNames: { "#ttl": "ttl" },
        ExpressionAttributeValues: { ":n": turn.length, ":now": new Date().toISOString(), ":ttl": expiresAt(this.retentionDays) },
        ReturnValues: "UPDATED_NEW",
      }),
    );
    const first = Number(counter.Attributes?.messageSeq) - turn.length + 1;
    const at = new Date().toISOString();
    await this.table.batchWrite(
      turn.map((message, i) => ({
        PutRequest: {
          Item: { pk: pk(tenantId, sessionId), sk: `MSG#${pad(first + i)}`, seq: first + i, ...message, runId, at, ttl: expiresAt(this.retentionDays) },
        },
      })),
    );
  }

  private async writeFirstTurn(tenantId: string, sessionId: string, runId: string, turn: { role: "user" | "assistant"; content: string }[]): Promise<void> {
    const at = new Date().toISOString();
    const ttl = expiresAt(this.retentionDays);
    await this.table.batchWrite([
      { PutRequest: { Item: { pk: pk(tenantId, sessionId), sk: "META", messageSeq: turn.length, createdAt: at, updatedAt: at, ttl } } },
      ...turn.map((message, i) => ({ PutRequest: { Item: { pk: pk(tenantId, sessionId), sk: `MSG#${pad(i + 1)}`, seq: i + 1, ...message, runId, at, ttl } } })),
    ]);
  }

  async messages(tenantId: string, sessionId: string): Promise<SessionMessage[]> {
    const items = await this.table.queryPrefix<SessionMessage & { pk: string; sk: string; ttl?: number }>(pk(tenantId, sessionId), "MSG#");
    return items.map(({ seq, role, content, runId, at }) => ({ seq, role, content, runId, at }));
  }

  /** Forgets the session: every message and its counter. Returns whether there was anything. */
  async delete(tenantId: string, sessionId: string): Promise<boolean> {
    const items = await this.table.queryPrefix<{ pk: string; sk: string }>(pk(tenantId, sessionId), "");
    await this.table.batchWrite(items.map(({ pk, sk }) => ({ DeleteRequest: { Key: { pk, sk } } })));
    return items.length > 0;
  }
}
