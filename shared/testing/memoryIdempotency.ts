import type { IdempotencyClaim, IdempotencyKeys } from "../ports/idempotency.js";

/** The idempotency keys port in memory: claims that expire while in progress, given back by their run. */
export class MemoryIdempotency implements IdempotencyKeys {
  readonly claims = new Map<string, { runId: string; bodyHash: string; inProgressUntil?: number }>();

  async claim(
    tenantId: string,
    key: string,
    claim: { runId: string; bodyHash: string; inProgressSeconds: number },
  ): Promise<IdempotencyClaim> {
    const now = Math.floor(Date.now() / 1000);
    const existing = this.claims.get(`${tenantId}|${key}`);
    if (existing && !(existing.inProgressUntil !== undefined && existing.inProgressUntil < now)) {
      return { claimed: false, runId: existing.runId, bodyHash: existing.bodyHash };
    }
    this.claims.set(`${tenantId}|${key}`, { runId: claim.runId, bodyHash: claim.bodyHash, inProgressUntil: now + claim.inProgressSeconds });
    return { claimed: true };
  }

  async complete(tenantId: string, key: string): Promise<void> {
    const existing = this.claims.get(`${tenantId}|${key}`);
    if (existing) delete existing.inProgressUntil;
  }

  async release(tenantId: string, key: string, runId: string): Promise<void> {
    if (this.claims.get(`${tenantId}|${key}`)?.runId === runId) this.claims.delete(`${tenantId}|${key}`);
  }
}
