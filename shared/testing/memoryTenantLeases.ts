import type { LeaseKind, TenantLease, TenantLeases } from "../ports/tenantLeases.js";

/** The tenant leases port in memory: each tenant's slots of each kind, held until given back or expired by `clock`. */
export class MemoryTenantLeases implements TenantLeases {
  private readonly slots = new Map<string, Map<number, { leaseId: string; expiresAt: number }>>();

  constructor(private readonly clock: () => number = () => Date.now()) {}

  private of(kind: LeaseKind, tenantId: string) {
    const key = `${kind}#${tenantId}`;
    const slots = this.slots.get(key) ?? new Map<number, { leaseId: string; expiresAt: number }>();
    this.slots.set(key, slots);
    return slots;
  }

  async acquire(kind: LeaseKind, tenantId: string, limit: number, leaseId: string, ttlMs: number): Promise<TenantLease | undefined> {
    const now = this.clock();
    const slots = this.of(kind, tenantId);
    const live = [...slots].filter(([, lease]) => lease.expiresAt > now);
    const own = live.find(([, lease]) => lease.leaseId === leaseId)?.[0];
    const free = Array.from({ length: limit }, (_, slot) => slot).find((slot) => !live.some(([held]) => held === slot));
    const slot = own ?? (live.length < limit ? free : undefined);
    if (slot === undefined) return undefined;
    slots.set(slot, { leaseId, expiresAt: now + ttlMs });
    return { kind, tenantId, slot, leaseId };
  }

  async renew({ kind, tenantId, slot, leaseId }: TenantLease, ttlMs: number): Promise<boolean> {
    const lease = this.of(kind, tenantId).get(slot);
    if (lease?.leaseId !== leaseId) return false;
    lease.expiresAt = this.clock() + ttlMs;
    return true;
  }

  async release({ kind, tenantId, slot, leaseId }: TenantLease): Promise<void> {
    const slots = this.of(kind, tenantId);
    if (slots.get(slot)?.leaseId === leaseId) slots.delete(slot);
  }

  async held(kind: LeaseKind, tenantId: string): Promise<number> {
    const now = this.clock();
    return [...this.of(kind, tenantId).values()].filter((lease) => lease.expiresAt > now).length;
  }
}
