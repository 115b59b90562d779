import type { SavePolicyRequest, ToolPolicy } from "../contracts/policies.js";
import { checkPolicy } from "../policy/policySet.js";
import type { Ports } from "../ports/index.js";

export type SavePolicyPorts = Pick<Ports, "policies" | "tools">;

/**
 * Saves a new version of a tenant's tool policy once Cedar accepts it against the schema of the
 * tenant's catalogue now (shared/policy/toolSchema.ts): text that does not parse, a permit, an
 * unknown tool or argument is a 400 with Cedar's reason, and nothing is saved.
 */
export async function savePolicy(ports: SavePolicyPorts, tenantId: string, name: string, policy: SavePolicyRequest): Promise<ToolPolicy> {
  await checkPolicy(policy.cedar, await ports.tools.registryFor(tenantId));
  return ports.policies.save(tenantId, name, policy);
}
