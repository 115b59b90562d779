import { logger } from "../observability.js";

/** What a tenant's leases bound: its code sandboxes running at once, or its open streams. */
export type LeaseKind = "sandbox" | "stream";

/** A lease held: one of the tenant's slots of a kind, and who holds it. */
export interface TenantLease {
  kind: LeaseKind;
  tenantId: string;
  /** Which of the tenant's slots of this kind (0 to limit − 1). */
  slot: number;
  leaseId: string;
}

/**
 * The tenant leases port: what each tenant has of a kind at once, across every Lambda container,
 * within a limit. A lease is one of the tenant's `limit` slots, taken conditionally (two callers
 * cannot both take the last one), renewed while its holder lives, and counted until it is given
 * back or expires, so a holder that crashed blocks nobody for longer than its lease.
 * Adapter: TenantLeaseStore (DynamoDB); fake: shared/testing/memoryTenantLeases.ts;
 * contract: test/unit/shared/ports/tenantLeases.test.ts.
 */
export interface TenantLeases {
  /**
   * A slot for `leaseId` for `ttlMs`, if the tenant holds fewer than `limit` live leases of the kind
   * besides its own; undefined if not. The same `leaseId` takes its own slot again (a retried call
   * whose first attempt died).
   */
  acquire(kind: LeaseKind, tenantId: string, limit: number, leaseId: string, ttlMs: number): Promise<TenantLease | undefined>;
  /** Moves the lease's expiry to `ttlMs` from now; false when its slot is no longer its own (it lapsed and was taken, or was given back). */
  renew(lease: TenantLease, ttlMs: number): Promise<boolean>;
  /** Gives the slot back, if the lease still holds it (an expired one may have been taken since). */
  release(lease: TenantLease): Promise<void>;
  /** How many leases of the kind the tenant holds now (not given back, not expired). */
  held(kind: LeaseKind, tenantId: string): Promise<number>;
}

/** How often a holder renews its lease: with a lease of 60 s, two renewals may fail before it lapses. */
const RENEW_MS = 20_000;

/** A lease kept alive until `release` (which gives it back once, whatever the caller does twice). */
export interface HeldLease {
  release(): Promise<void>;
}

/**
 * Keeps a lease taken: renewed for `ttlMs` every RENEW_MS until released. A renewal or release
 * that fails is logged: the lease then lapses by itself.
 */
export function keepRenewed(leases: TenantLeases, lease: TenantLease, ttlMs: number): HeldLease {
  const about = { kind: lease.kind, tenant: lease.tenantId, leaseId: lease.leaseId };
  const renewal = setInterval(() => {
    leases.renew(lease, ttlMs).then(
      (held) => held || logger.warn("a lease had lapsed; it no longer counts", about),
      (error) => logger.warn("renewing a lease failed", { ...about, error: String(error) }),
    );
  }, RENEW_MS);
  // The timer never keeps a process alive by itself (a test's, or the local stack's at shutdown).
  renewal.unref();
  let released: Promise<void> | undefined;
  return {
    release() {
      clearInterval(renewal);
      released ??= leases
        .release(lease)
        .catch((error) => logger.warn("giving a lease back failed; it lapses instead", { ...about, error: String(error) }));
      return released;
    },
  };
}
