import type { StreamLease, StreamLeases } from "../ports/streamLeases.js";

/** The stream leases port in memory: each tenant's leases and their expiries; a lapsed one no longer counts. */
export class MemoryStreamLeases implements StreamLeases {
  readonly leases = new Map<string, Map<string, number>>();

  private of(tenantId: string): Map<string, number> {
    const leases = this.leases.get(tenantId) ?? new Map<string, number>();
    this.leases.set(tenantId, leases);
    return leases;
  }

  async acquire(lease: StreamLease, limit: number, now: number): Promise<boolean> {
    const leases = this.of(lease.tenantId);
    for (const [id, expiresAt] of leases) if (expiresAt <= now) leases.delete(id);
    if (leases.size >= limit) return false;
    leases.set(lease.leaseId, lease.expiresAt);
    return true;
  }

  async renew(lease: StreamLease): Promise<boolean> {
    const leases = this.of(lease.tenantId);
    if (!leases.has(lease.leaseId)) return false;
    leases.set(lease.leaseId, lease.expiresAt);
    return true;
  }

  async release(tenantId: string, leaseId: string): Promise<void> {
    this.of(tenantId).delete(leaseId);
  }

  async held(tenantId: string, now: number): Promise<number> {
    return [...this.of(tenantId).values()].filter((expiresAt) => expiresAt > now).length;
  }
}
