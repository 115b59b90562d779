import type { SavePolicyRequest, ToolPolicy } from "../contracts/policies.js";

/**
 * The tool policies port: a tenant's named Cedar policies, each save an immutable new version
 * (1 for a new name, then the latest + 1); the latest version of each is in force. Adapter:
 * PolicyStore (DynamoDB); fake: shared/testing/memoryPolicies.ts.
 */
export interface ToolPolicies {
  /** Saves the next version; saves racing for one name each get a number of their own. */
  save(tenantId: string, name: string, policy: SavePolicyRequest, now?: Date): Promise<ToolPolicy>;
  /** That version, or the latest without one; undefined when there is none. */
  get(tenantId: string, name: string, version?: number): Promise<ToolPolicy | undefined>;
  /** The latest version of each of the tenant's policies, in name order: the ones in force. */
  list(tenantId: string): Promise<ToolPolicy[]>;
  /** Every version of one policy, oldest first (none: an unknown name). */
  versions(tenantId: string, name: string): Promise<ToolPolicy[]>;
  /** Removes every version; false when there was none. A later save of the name starts again at 1. */
  delete(tenantId: string, name: string): Promise<boolean>;
}
