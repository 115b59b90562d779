/**
 * The sandbox leases port: the code sandboxes a tenant has running at once, across every Lambda
 * container. A lease is one of the tenant's `limit` slots, taken conditionally (two calls cannot
 * both take the last one) until it is given back or expires, so a holder that crashed blocks
 * nobody for longer than its lease. Adapter: SandboxLeaseStore (DynamoDB); fake:
 * shared/testing/memorySandboxLeases.ts; contract: test/unit/shared/ports/sandboxLeases.test.ts.
 */
export interface SandboxLeases {
  /**
   * Takes a free slot (never taken, given back, or expired) of the tenant's first `limit` for
   * `holder` for `ttlMs`; undefined when all are held. The same holder may take its own slot again
   * (a retried call whose first attempt died).
   */
  acquire(tenantId: string, holder: string, limit: number, ttlMs: number): Promise<SandboxLease | undefined>;
  /** Gives the slot back, if the lease still holds it (an expired one may have been taken since). */
  release(lease: SandboxLease): Promise<void>;
  /** How many of the tenant's slots are held now (leases not given back and not expired). */
  held(tenantId: string): Promise<number>;
}

export interface SandboxLease {
  tenantId: string;
  /** Which of the tenant's slots (0 to limit − 1). */
  slot: number;
  holder: string;
}
