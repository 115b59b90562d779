import { type SaveAgentRequest, SavedAgent } from "../contracts/agents.js";
import { readVersioned } from "../contracts/schemaVersion.js";
import type { SavedAgents } from "../ports/savedAgents.js";
import { keys } from "./keys.js";
import { itemData, type Table } from "./table.js";
import { VersionedItems } from "./versionedItems.js";

/** A tenant's saved agents (`TENANT#t` / `AGENT#<name>#v<version>`): one item per version, never changed once written. */
export class SavedAgentStore implements SavedAgents {
  private readonly items: VersionedItems<SavedAgent>;

  constructor(table: Table) {
    this.items = new VersionedItems(table, { item: keys.savedAgent, prefix: keys.savedAgentPrefix }, agentOf, "Saved agent");
  }

  save(tenantId: string, name: string, config: SaveAgentRequest, now = new Date()): Promise<SavedAgent> {
    return this.items.save(tenantId, name, (version) =>
      SavedAgent.parse({ ...config, schemaVersion: 1, name, version, createdAt: now.toISOString() }),
    );
  }

  get(tenantId: string, name: string, version?: number): Promise<SavedAgent | undefined> {
    return this.items.get(tenantId, name, version);
  }

  list(tenantId: string): Promise<SavedAgent[]> {
    return this.items.list(tenantId);
  }

  versions(tenantId: string, name: string): Promise<SavedAgent[]> {
    return this.items.versions(tenantId, name);
  }

  delete(tenantId: string, name: string): Promise<boolean> {
    return this.items.delete(tenantId, name);
  }
}

function agentOf(item: Record<string, unknown>): SavedAgent {
  return readVersioned(SavedAgent, `saved agent ${String(item.name)}`, itemData(item));
}
