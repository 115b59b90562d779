import type { SavePolicyRequest, ToolPolicy } from "../contracts/policies.js";
import type { ToolPolicies } from "../ports/policies.js";
import { stored } from "./clone.js";

/** The tool policies port in memory: each tenant's policies by name, their versions in order. */
export class MemoryPolicies implements ToolPolicies {
  private readonly policies = new Map<string, Map<string, ToolPolicy[]>>();

  private of(tenantId: string): Map<string, ToolPolicy[]> {
    const tenant = this.policies.get(tenantId) ?? new Map<string, ToolPolicy[]>();
    this.policies.set(tenantId, tenant);
    return tenant;
  }

  async save(tenantId: string, name: string, policy: SavePolicyRequest, now = new Date()): Promise<ToolPolicy> {
    const versions = this.of(tenantId).get(name) ?? [];
    const saved: ToolPolicy = { ...stored(policy), schemaVersion: 1, name, version: versions.length + 1, createdAt: now.toISOString() };
    this.of(tenantId).set(name, [...versions, saved]);
    return stored(saved);
  }

  async get(tenantId: string, name: string, version?: number): Promise<ToolPolicy | undefined> {
    const versions = this.of(tenantId).get(name) ?? [];
    return stored(version === undefined ? versions.at(-1) : versions.find((v) => v.version === version));
  }

  async list(tenantId: string): Promise<ToolPolicy[]> {
    return [...this.of(tenantId).entries()].sort(([a], [b]) => (a < b ? -1 : 1)).flatMap(([, versions]) => stored(versions.slice(-1)));
  }

  async versions(tenantId: string, name: string): Promise<ToolPolicy[]> {
    return stored(this.of(tenantId).get(name) ?? []);
  }

  async delete(tenantId: string, name: string): Promise<boolean> {
    return this.of(tenantId).delete(name);
  }
}
