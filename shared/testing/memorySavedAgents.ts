import type { SaveAgentRequest, SavedAgent } from "../contracts/agents.js";
import type { SavedAgents } from "../ports/savedAgents.js";
import { stored } from "./clone.js";

/** The saved agents port in memory: each tenant's agents by name, their versions in order. */
export class MemorySavedAgents implements SavedAgents {
  private readonly agents = new Map<string, Map<string, SavedAgent[]>>();

  private of(tenantId: string): Map<string, SavedAgent[]> {
    let tenant = this.agents.get(tenantId);
    if (!tenant) this.agents.set(tenantId, (tenant = new Map()));
    return tenant;
  }

  async save(tenantId: string, name: string, config: SaveAgentRequest, now = new Date()): Promise<SavedAgent> {
    const versions = this.of(tenantId).get(name) ?? [];
    const agent: SavedAgent = { ...stored(config), schemaVersion: 1, name, version: versions.length + 1, createdAt: now.toISOString() };
    this.of(tenantId).set(name, [...versions, agent]);
    return stored(agent);
  }

  async get(tenantId: string, name: string, version?: number): Promise<SavedAgent | undefined> {
    const versions = this.of(tenantId).get(name) ?? [];
    return stored(version === undefined ? versions.at(-1) : versions.find((v) => v.version === version));
  }

  async list(tenantId: string): Promise<SavedAgent[]> {
    return [...this.of(tenantId).entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, versions]) => stored(versions.at(-1)!));
  }

  async versions(tenantId: string, name: string): Promise<SavedAgent[]> {
    return stored(this.of(tenantId).get(name) ?? []);
  }

  async delete(tenantId: string, name: string): Promise<boolean> {
    return this.of(tenantId).delete(name);
  }
}
