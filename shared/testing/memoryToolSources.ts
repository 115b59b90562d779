import { ToolSourceRecord } from "../contracts/toolSources.js";
import type { ToolSources } from "../ports/toolSources.js";
import { stored } from "./clone.js";

/** The tool sources port in memory: each tenant's sources by name, and the sources each run was told are down. */
export class MemoryToolSources implements ToolSources {
  private readonly byTenant = new Map<string, Map<string, ToolSourceRecord>>();
  private readonly toldDown = new Map<string, Set<string>>();

  private of(tenantId: string): Map<string, ToolSourceRecord> {
    const sources = this.byTenant.get(tenantId) ?? new Map<string, ToolSourceRecord>();
    this.byTenant.set(tenantId, sources);
    return sources;
  }

  async create(source: ToolSourceRecord): Promise<boolean> {
    const sources = this.of(source.tenantId);
    if (sources.has(source.name)) return false;
    sources.set(source.name, stored(ToolSourceRecord.parse(source)));
    return true;
  }

  async get(tenantId: string, name: string): Promise<ToolSourceRecord | undefined> {
    return stored(this.of(tenantId).get(name));
  }

  async list(tenantId: string): Promise<ToolSourceRecord[]> {
    return stored([...this.of(tenantId).values()].sort((a, b) => (a.name < b.name ? -1 : 1)));
  }

  async delete(tenantId: string, name: string): Promise<boolean> {
    return this.of(tenantId).delete(name);
  }

  async markUnavailableOnce(runId: string, source: string): Promise<boolean> {
    const told = this.toldDown.get(runId) ?? new Set<string>();
    this.toldDown.set(runId, told);
    if (told.has(source)) return false;
    told.add(source);
    return true;
  }
}
