import { TenantSettings } from "../contracts/api.js";
import type { TenantDefaults } from "../ports/tenantSettings.js";
import { keys } from "./keys.js";
import type { Table } from "./table.js";

/** A tenant's defaults (`PUT /v1/settings`), one item beside its run slots. */
export class TenantSettingsStore implements TenantDefaults {
  constructor(private readonly table: Table) {}

  async get(tenantId: string): Promise<TenantSettings> {
    const { Item } = await this.table.getItem({ Key: keys.tenantSettings(tenantId) });
    return TenantSettings.parse({
      ...(Item?.multitask ? { multitask: Item.multitask } : {}),
      ...(Item?.instructions ? { instructions: Item.instructions } : {}),
      ...(Item?.guardrails?.length ? { guardrails: Item.guardrails } : {}),
      ...(Item?.onlineEvals ? { onlineEvals: Item.onlineEvals } : {}),
      ...(Item?.toolFailures ? { toolFailures: Item.toolFailures } : {}),
      ...(Item?.budget ? { budget: Item.budget } : {}),
      ...(Item?.maxSandboxes ? { maxSandboxes: Item.maxSandboxes } : {}),
      ...(Item?.maxOpenStreams !== undefined ? { maxOpenStreams: Item.maxOpenStreams } : {}),
    });
  }

  async put(tenantId: string, settings: TenantSettings): Promise<void> {
    await this.table.putItem({ Item: { ...keys.tenantSettings(tenantId), ...settings, updatedAt: new Date().toISOString() } });
  }
}
