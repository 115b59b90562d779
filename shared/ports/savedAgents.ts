import type { SaveAgentRequest, SavedAgent } from "../contracts/agents.js";

/**
 * The saved agents port: a tenant's named agent configurations, each save an immutable new version
 * (1 for a new name, then the latest + 1). Adapter: SavedAgentStore (DynamoDB); fake:
 * shared/testing/memorySavedAgents.ts.
 */
export interface SavedAgents {
  /** Saves the next version; saves racing for one name each get a number of their own. */
  save(tenantId: string, name: string, config: SaveAgentRequest, now?: Date): Promise<SavedAgent>;
  /** That version, or the latest without one; undefined when there is none. */
  get(tenantId: string, name: string, version?: number): Promise<SavedAgent | undefined>;
  /** The latest version of each of the tenant's agents, in name order. */
  list(tenantId: string): Promise<SavedAgent[]>;
  /** Every version of one agent, oldest first (none: an unknown name). */
  versions(tenantId: string, name: string): Promise<SavedAgent[]>;
  /** Removes every version; false when there was none. A later save of the name starts again at 1. */
  delete(tenantId: string, name: string): Promise<boolean>;
}
