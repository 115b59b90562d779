import { isStreamTokenShaped, newStreamToken, type StreamGrant, type StreamTokens } from "../ports/streamTokens.js";

/** The stream tokens port in memory: each token's grant and when it expires. */
export class MemoryStreamTokens implements StreamTokens {
  private readonly grants = new Map<string, { grant: StreamGrant; expiresAtMs: number }>();

  async issue(grant: StreamGrant, ttlSeconds: number): Promise<{ token: string; expiresAt: string }> {
    const token = newStreamToken();
    const expiresAtMs = Date.now() + ttlSeconds * 1000;
    this.grants.set(token, { grant: { tenantId: grant.tenantId, runId: grant.runId }, expiresAtMs });
    return { token, expiresAt: new Date(expiresAtMs).toISOString() };
  }

  async verify(token: string, now = Date.now()): Promise<StreamGrant | undefined> {
    const kept = isStreamTokenShaped(token) ? this.grants.get(token) : undefined;
    return kept && kept.expiresAtMs > now ? { ...kept.grant } : undefined;
  }
}
