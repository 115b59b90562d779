import { setTimeout as delay } from "node:timers/promises";
import { tenantLimit } from "../contracts/tenantCeilings.js";
import type { Runs } from "../ports/runs.js";
import { type HeldLease, keepRenewed, type TenantLeases } from "../ports/tenantLeases.js";
import type { TenantDefaults } from "../ports/tenantSettings.js";

/** What the bound reads: the run's tenant, the tenant's own limit, and the leases every container shares. */
export interface SandboxBoundPorts {
  runs: Pick<Runs, "get">;
  tenantSettings: Pick<TenantDefaults, "get">;
  tenantLeases: TenantLeases;
}

export interface SandboxBoundOptions {
  /** The deployment's limit: each tenant's default, and the most it may set (`MAX_SANDBOXES_PER_TENANT`). */
  maxPerTenant: number;
  /** How long a lease lasts past its last renewal (every 20 s) when its holder died: longer than its sandbox may go on running. */
  leaseMs: number;
  /** How long a call waits for a slot before it is refused. */
  waitMs?: number;
}

/**
 * A call waits this long for one of its tenant's sandboxes before it is refused: most calls end
 * within seconds, and a wait costs less than a model round spent reading an error and calling again.
 * Waiting longer would hold the agent's function idle and spend its time limit.
 */
export const SANDBOX_WAIT_MS = 10_000;

/** All of the tenant's sandboxes were busy for the whole wait: the code did not run. */
export class SandboxesBusyError extends Error {
  constructor(
    readonly limit: number,
    readonly waitedMs: number,
  ) {
    super(
      `the code did not run: this tenant may have at most ${limit} code ${limit === 1 ? "sandbox" : "sandboxes"} running at once ` +
        `(its maxSandboxes setting), and ${limit === 1 ? "it was" : "all were"} busy with other run_code calls for ${Math.round(waitedMs / 1000)} s. ` +
        "Run it again once they have ended, or go on without it.",
    );
    this.name = "SandboxesBusyError";
  }
}

/**
 * The per-tenant bound on code sandboxes running at once, across every container: a call takes a
 * lease on one of its tenant's slots (waiting up to `waitMs` for one), runs, renewing it while it
 * runs however long that is, and gives it back however it ended (a result, an error, a time-out,
 * an abort). A holder that died without giving it back frees its slot when the lease expires.
 */
export class SandboxBound {
  private readonly waitMs: number;

  constructor(
    private readonly ports: SandboxBoundPorts,
    private readonly options: SandboxBoundOptions,
  ) {
    this.waitMs = options.waitMs ?? SANDBOX_WAIT_MS;
  }

  /** Runs `work` holding one of the run's tenant's slots; throws SandboxesBusyError when none freed in time. */
  async holding<T>(runId: string, holder: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const run = await this.ports.runs.get(runId);
    if (!run) throw new Error(`run ${runId} was not found`);
    const limit = await this.limitOf(run.tenantId);
    const lease = await this.take(run.tenantId, holder, limit, signal);
    try {
      return await work();
    } finally {
      await lease.release();
    }
  }

  /** The tenant's own limit, within the deployment's (a value set under a higher ceiling gets the lower one). */
  private async limitOf(tenantId: string): Promise<number> {
    return tenantLimit((await this.ports.tenantSettings.get(tenantId)).maxSandboxes, this.options.maxPerTenant);
  }

  /** A lease, asked for again with growing pauses (200 ms to 1 s) until the wait is over. */
  private async take(tenantId: string, holder: string, limit: number, signal?: AbortSignal): Promise<HeldLease> {
    const started = Date.now();
    for (let pause = 200; ; pause = Math.min(pause * 2, 1_000)) {
      signal?.throwIfAborted();
      const { tenantLeases } = this.ports;
      const lease = await tenantLeases.acquire("sandbox", tenantId, limit, holder, this.options.leaseMs);
      if (lease) return keepRenewed(tenantLeases, lease, this.options.leaseMs);
      const left = this.waitMs - (Date.now() - started);
      if (left <= 0) throw new SandboxesBusyError(limit, this.waitMs);
      await delay(Math.min(pause, left), undefined, { signal });
    }
  }
}
