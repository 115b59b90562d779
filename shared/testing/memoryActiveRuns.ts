import type { ActiveRuns } from "../ports/activeRuns.js";

/** The active runs port in memory: taken up to the limit, never given back below zero. */
export class MemoryActiveRuns implements ActiveRuns {
  readonly taken = new Map<string, number>();

  async acquire(tenantId: string, limit: number): Promise<boolean> {
    const count = this.taken.get(tenantId) ?? 0;
    if (count >= limit) return false;
    this.taken.set(tenantId, count + 1);
    return true;
  }

  async release(tenantId: string): Promise<void> {
    const count = this.taken.get(tenantId) ?? 0;
    if (count > 0) this.taken.set(tenantId, count - 1);
  }

  async count(tenantId: string): Promise<number> {
    return this.taken.get(tenantId) ?? 0;
  }
}
