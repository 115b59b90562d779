/**
 * The active runs port: how many runs a tenant has going, its slots. A slot is taken
 * conditionally (two requests cannot both take the last one) and given back once per run.
 * Adapter: ActiveRunStore (DynamoDB); fake: shared/testing/memoryActiveRuns.ts.
 */
export interface ActiveRuns {
  /** Takes a slot if fewer than `limit` are taken. */
  acquire(tenantId: string, limit: number): Promise<boolean>;
  /** Gives one back (never below zero). */
  release(tenantId: string): Promise<void>;
  /** How many are taken. */
  count(tenantId: string): Promise<number>;
}
