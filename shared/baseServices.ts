import type { Ports } from "./ports/index.js";
import type { ApiKeyStore } from "./store/apiKeys.js";
import type { Listings } from "./store/listings.js";
import type { RunSnapshots } from "./store/runSnapshots.js";
import type { TenantSettingsStore } from "./store/settings.js";
import type { StreamTokenStore } from "./store/streamTokens.js";
import type { Table } from "./store/table.js";

/**
 * What every handler needs: the run's records in the table, its files, the notification queue and
 * the executions. No model and no tools: a function that runs no agent builds only this, and its
 * bundle carries neither the model client nor the tools' libraries (functions/baseServices.ts wires
 * it, functions/services.ts adds them).
 */
export interface BaseServices extends Omit<Ports, "model" | "tools"> {
  table: Table;
  /** A run with its tasks, files and interrupts, in one read (`GET /v1/runs/{id}`). */
  snapshots: RunSnapshots;
  apiKeys: ApiKeyStore;
  listings: Listings;
  streamTokens: StreamTokenStore;
  /** Each tenant's own settings (`GET/PUT /v1/settings`), not the deployment's (`settings`). */
  tenantSettings: TenantSettingsStore;
}
