/**
 * The eval spend port: what judging a tenant's runs has cost each UTC day (online evals keep a
 * daily cost cap). Adapter: EvalSpendStore (DynamoDB); fake: shared/testing/memoryEvalSpend.ts.
 */
export interface EvalSpend {
  /** USD spent judging on `day` (YYYY-MM-DD, UTC); 0 for a day with none. */
  spent(tenantId: string, day: string): Promise<number>;
  /** Adds `usd` to the day's spend (atomically: judges of parallel runs add up). */
  add(tenantId: string, day: string, usd: number): Promise<void>;
}
