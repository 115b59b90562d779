import { randomUUID } from "node:crypto";
import { tenantLimit } from "../contracts/tenantCeilings.js";
import { StepwiseError } from "../errors.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import { type HeldLease, keepRenewed } from "../ports/tenantLeases.js";

/** How long a lease counts without renewal (every 20 s): a container that dies holding one frees it within this time. */
export const LEASE_MS = 60_000;
/** When a refused client may try again: a stream ends or lapses within a lease's time, most sooner. */
const RETRY_AFTER_SECONDS = 5;

/** What holding a stream touches: the leases, the tenant's own cap, the deployment's. */
export type OpenStreamPorts = Pick<Ports, "tenantLeases" | "tenantSettings"> & SettingsOf<"limits">;

/** The tenant holds as many long-held connections as it may: come back later (429, Retry-After). */
export class TooManyStreamsError extends StepwiseError {
  constructor(
    readonly limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(
      `This tenant has ${limit} streams open (streams, AG-UI runs, and MCP and A2A calls that follow a run), its limit. Retry after ${retryAfterSeconds} s, or close a stream.`,
      { statusCode: 429, code: "too_many_streams", details: { limit, retryAfterSeconds } },
    );
  }
}

/** One long-held connection's place among its tenant's open streams; `release` gives it back (once, whatever the caller does twice). */
export type OpenStream = HeldLease;

/** The tenant's cap: its own `maxOpenStreams` when set, within the deployment's MAX_OPEN_STREAMS_PER_TENANT. */
export async function openStreamLimit(ports: OpenStreamPorts, tenantId: string): Promise<number> {
  return tenantLimit((await ports.tenantSettings.get(tenantId)).maxOpenStreams, ports.settings.limits.maxOpenStreamsPerTenant);
}

/**
 * Takes a place among the tenant's open streams before a long-held connection starts (before a
 * run it starts is accepted, so a refusal changes nothing), or throws TooManyStreamsError. The
 * lease is renewed while the connection lives; the caller releases it when the connection closes,
 * however it closes. A release or renewal that fails is logged: the lease then lapses by itself.
 */
export async function openStream(ports: OpenStreamPorts, tenantId: string): Promise<OpenStream> {
  const limit = await openStreamLimit(ports, tenantId);
  const lease = await ports.tenantLeases.acquire("stream", tenantId, limit, randomUUID(), LEASE_MS);
  if (!lease) throw new TooManyStreamsError(limit, RETRY_AFTER_SECONDS);
  return keepRenewed(ports.tenantLeases, lease, LEASE_MS);
}

/** `work` (a call that follows a run) holding a place among the tenant's open streams, released when it ends, however it ends. */
export async function whileStreamOpen<T>(ports: OpenStreamPorts, tenantId: string, work: () => Promise<T>): Promise<T> {
  const stream = await openStream(ports, tenantId);
  try {
    return await work();
  } finally {
    await stream.release();
  }
}
