import { isStreamTokenShaped, newStreamToken, type StreamGrant, type StreamTokens } from "../ports/streamTokens.js";
import { keys } from "./keys.js";
import type { Table } from "./table.js";

/** Stream tokens (see ports/streamTokens.ts), stored by their hash like API keys: the table never holds one that works. */
export class StreamTokenStore implements StreamTokens {
  constructor(private readonly table: Table) {}

  async issue(grant: StreamGrant, ttlSeconds: number): Promise<{ token: string; expiresAt: string }> {
    const token = newStreamToken();
    const expires = Date.now() + ttlSeconds * 1000;
    await this.table.putItem({
      Item: { ...keys.streamToken(token), ...grant, expiresAtMs: expires, ttl: Math.ceil(expires / 1000) + 3600 },
    });
    return { token, expiresAt: new Date(expires).toISOString() };
  }

  async verify(token: string, now = Date.now()): Promise<StreamGrant | undefined> {
    if (!isStreamTokenShaped(token)) return undefined;
    const { Item } = await this.table.getItem({ Key: keys.streamToken(token) });
    if (!Item || Number(Item.expiresAtMs) <= now) return undefined;
    return { tenantId: String(Item.tenantId), runId: String(Item.runId) };
  }
}
