import { type SavePolicyRequest, ToolPolicy } from "../contracts/policies.js";
import { readVersioned } from "../contracts/schemaVersion.js";
import type { ToolPolicies } from "../ports/policies.js";
import { keys } from "./keys.js";
import { itemData, type Table } from "./table.js";
import { VersionedItems } from "./versionedItems.js";

/** A tenant's tool policies (`TENANT#t` / `POLICY#<name>#v<version>`): one item per version, never changed once written. */
export class PolicyStore implements ToolPolicies {
  private readonly items: VersionedItems<ToolPolicy>;

  constructor(table: Table) {
    this.items = new VersionedItems(table, { item: keys.toolPolicy, prefix: keys.toolPolicyPrefix }, policyOf, "Policy");
  }

  save(tenantId: string, name: string, policy: SavePolicyRequest, now = new Date()): Promise<ToolPolicy> {
    return this.items.save(tenantId, name, (version) =>
      ToolPolicy.parse({ ...policy, schemaVersion: 1, name, version, createdAt: now.toISOString() }),
    );
  }

  get(tenantId: string, name: string, version?: number): Promise<ToolPolicy | undefined> {
    return this.items.get(tenantId, name, version);
  }

  list(tenantId: string): Promise<ToolPolicy[]> {
    return this.items.list(tenantId);
  }

  versions(tenantId: string, name: string): Promise<ToolPolicy[]> {
    return this.items.versions(tenantId, name);
  }

  delete(tenantId: string, name: string): Promise<boolean> {
    return this.items.delete(tenantId, name);
  }
}

function policyOf(item: Record<string, unknown>): ToolPolicy {
  return readVersioned(ToolPolicy, `policy ${String(item.name)}`, itemData(item));
}
