/** A claim on a client's Idempotency-Key, or who holds it. */
export type IdempotencyClaim =
  | { claimed: true }
  /** Held by a request for `runId` with that body hash; `runId` undefined: it has just been given back. */
  | { claimed: false; runId?: string; bodyHash?: string };

/**
 * The idempotency keys port (`Idempotency-Key` on run creation, Powertools idempotency's model):
 * a claim is in progress until completed, may be taken over once its in-progress time has passed,
 * and is given back (deleted) when creating the run fails. Adapter: IdempotencyStore (DynamoDB);
 * fake: shared/testing/memoryIdempotency.ts.
 */
export interface IdempotencyKeys {
  claim(
    tenantId: string,
    key: string,
    claim: { runId: string; bodyHash: string; inProgressSeconds: number; ttlSeconds: number },
  ): Promise<IdempotencyClaim>;
  /** The run exists and is started: the key now stands for it. */
  complete(tenantId: string, key: string): Promise<void>;
  /** Gives the key back, if `runId` still holds it. */
  release(tenantId: string, key: string, runId: string): Promise<void>;
}
