import type { ToolSourceRecord } from "../contracts/toolSources.js";

/**
 * The tool sources port: each tenant's MCP servers (header values arrive sealed and are kept as
 * given), and which sources a run has already been told are down. Adapter: ToolSourceStore
 * (DynamoDB); fake: shared/testing/memoryToolSources.ts; contract: test/unit/shared/ports/toolSources.test.ts.
 */
export interface ToolSources {
  /** Creates the source; false when the tenant has one of that name already. */
  create(source: ToolSourceRecord): Promise<boolean>;
  get(tenantId: string, name: string): Promise<ToolSourceRecord | undefined>;
  /** In name order. */
  list(tenantId: string): Promise<ToolSourceRecord[]>;
  /** False when there was none. */
  delete(tenantId: string, name: string): Promise<boolean>;
  /** True the first time for this run and source (the caller then tells the run): told once however many agents notice. */
  markUnavailableOnce(runId: string, source: string): Promise<boolean>;
}
