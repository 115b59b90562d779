import type { SandboxLease, SandboxLeases } from "../ports/sandboxLeases.js";

/** The sandbox leases port in memory: each tenant's slots, held until given back or expired by `clock`. */
export class MemorySandboxLeases implements SandboxLeases {
  private readonly slots = new Map<string, Map<number, { holder: string; expiresAtMs: number }>>();

  constructor(private readonly clock: () => number = Date.now) {}

  async acquire(tenantId: string, holder: string, limit: number, ttlMs: number): Promise<SandboxLease | undefined> {
    const now = this.clock();
    const slots = this.slots.get(tenantId) ?? new Map();
    this.slots.set(tenantId, slots);
    for (let slot = 0; slot < limit; slot++) {
      const lease = slots.get(slot);
      if (lease && lease.expiresAtMs > now && lease.holder !== holder) continue;
      slots.set(slot, { holder, expiresAtMs: now + ttlMs });
      return { tenantId, slot, holder };
    }
    return undefined;
  }

  async release({ tenantId, slot, holder }: SandboxLease): Promise<void> {
    const slots = this.slots.get(tenantId);
    if (slots?.get(slot)?.holder === holder) slots.delete(slot);
  }

  async held(tenantId: string): Promise<number> {
    const now = this.clock();
    return [...(this.slots.get(tenantId)?.values() ?? [])].filter((lease) => lease.expiresAtMs > now).length;
  }
}
