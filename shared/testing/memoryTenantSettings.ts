import { TenantSettings } from "../contracts/api.js";
import type { TenantDefaults } from "../ports/tenantSettings.js";
import { stored } from "./clone.js";

/** The tenant settings port in memory: each tenant's settings, replaced whole by a put. */
export class MemoryTenantSettings implements TenantDefaults {
  private readonly byTenant = new Map<string, TenantSettings>();

  async get(tenantId: string): Promise<TenantSettings> {
    return stored(this.byTenant.get(tenantId)) ?? {};
  }

  async put(tenantId: string, settings: TenantSettings): Promise<void> {
    this.byTenant.set(tenantId, stored(TenantSettings.parse(settings)));
  }
}
