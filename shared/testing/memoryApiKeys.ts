import type { ApiKeys } from "../ports/apiKeys.js";

/** The API keys port in memory: each key's tenant. */
export class MemoryApiKeys implements ApiKeys {
  private readonly tenants = new Map<string, string>();

  async register(key: string, tenantId: string): Promise<void> {
    this.tenants.set(key, tenantId);
  }

  async tenantOf(key: string): Promise<string | undefined> {
    return this.tenants.get(key);
  }
}
