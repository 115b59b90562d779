import type { TenantSettings } from "../contracts/api.js";

/**
 * The tenant settings port: each tenant's own defaults (`GET/PUT /v1/settings`), not the
 * deployment's settings. Adapter: TenantSettingsStore (DynamoDB); fake:
 * shared/testing/memoryTenantSettings.ts; contract: test/unit/shared/ports/tenantSettings.test.ts.
 */
export interface TenantDefaults {
  /** What the tenant set; `{}` for a tenant that never set any. */
  get(tenantId: string): Promise<TenantSettings>;
  /** Replaces the tenant's settings with these. */
  put(tenantId: string, settings: TenantSettings): Promise<void>;
}
