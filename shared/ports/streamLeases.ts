/** One open stream's lease: whose, which, and until when (epoch ms) it counts unless renewed. */
export interface StreamLease {
  tenantId: string;
  leaseId: string;
  expiresAt: number;
}

/**
 * The stream leases port: the long-held connections (streams, protocol calls that follow a run)
 * each tenant has open, across every container. A lease is taken conditionally (two requests
 * cannot both take the last one), renewed while its connection lives, and counts only until it
 * expires: a container that dies holding one gives it back by letting it lapse.
 * Adapter: StreamLeaseStore (DynamoDB); fake: shared/testing/memoryStreamLeases.ts;
 * contract: test/unit/shared/ports/streamLeases.test.ts.
 */
export interface StreamLeases {
  /** Takes the lease if the tenant holds fewer than `limit` leases unexpired at `now`; false if not. */
  acquire(lease: StreamLease, limit: number, now: number): Promise<boolean>;
  /** Moves a held lease's expiry; false when it is no longer held (it lapsed and was cleared, or was released). */
  renew(lease: StreamLease): Promise<boolean>;
  /** Gives the lease back (nothing when it is not held). */
  release(tenantId: string, leaseId: string): Promise<void>;
  /** How many leases the tenant holds unexpired at `now`. */
  held(tenantId: string, now: number): Promise<number>;
}
