import { randomBytes } from "node:crypto";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { keys } from "./keys.js";
import type { Table } from "./table.js";

/**
 * Short-lived, read-only tokens for one run's stream, for browsers (EventSource cannot send an
 * Authorization header, and an API key must never travel in a URL). Stored hashed, like API keys;
 * they open nothing but `GET /v1/runs/{runId}/stream` of the run they were issued for.
 */

export interface StreamGrant {
  tenantId: string;
  runId: string;
}

export class StreamTokenStore {
  constructor(private readonly table: Table) {}

  async issue(grant: StreamGrant, ttlSeconds: number): Promise<{ token: string; expiresAt: string }> {
    const token = `st_${randomBytes(24).toString("base64url")}`;
    const expires = Date.now() + ttlSeconds * 1000;
    await this.table.doc.send(
      new PutCommand({
        TableName: this.table.name,
        // The table's TTL removes it later; `expiresAtMs` is what is checked (TTL deletion is lazy).
        Item: { ...keys.streamToken(token), ...grant, expiresAtMs: expires, ttl: Math.ceil(expires / 1000) + 3600 },
      }),
    );
    return { token, expiresAt: new Date(expires).toISOString() };
  }

  /** The grant of a valid, unexpired token; undefined otherwise. */
  async verify(token: string, now = Date.now()): Promise<StreamGrant | undefined> {
    if (!/^st_[A-Za-z0-9_-]{20,64}$/.test(token)) return undefined;
    const { Item } = await this.table.doc.send(new GetCommand({ TableName: this.table.name, Key: keys.streamToken(token) }));
    if (!Item || Number(Item.expiresAtMs) <= now) return undefined;
    return { tenantId: String(Item.tenantId), runId: String(Item.runId) };
  }
}
