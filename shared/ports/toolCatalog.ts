import type { ToolSet } from "./tools.js";

/**
 * The tool catalog port: the tools a tenant's agents may use now — the built-ins plus the tenant's
 * tool sources (MCP), which may change between runs and between rounds of one run.
 */
export interface ToolCatalog {
  /** With `run`, a source that cannot be reached is reported to that run (tool_source.unavailable). */
  registryFor(tenantId: string, run?: { runId: string }): Promise<ToolSet>;
  /** Drops what this container remembers of the tenant's tools (after it changed its sources). */
  invalidate?(tenantId: string): void;
}
