import type { SealedSecret } from "./contracts/toolSources.js";
import type { Ports } from "./ports/index.js";
import type { ApiKeyStore } from "./store/apiKeys.js";
import type { Listings } from "./store/listings.js";
import type { RunSnapshots } from "./store/runSnapshots.js";
import type { TenantSettingsStore } from "./store/settings.js";
import type { StreamTokenStore } from "./store/streamTokens.js";
import type { Table } from "./store/table.js";
import type { ToolSourceStore } from "./store/toolSources.js";

/**
 * Every port a handler can be wired with: the core's (Ports) and the stores only the doors read.
 * No handler gets them all: each names the ones it uses (functions/uses.ts) and its wiring builds
 * those, each on first use (functions/wiring.ts); tests pass the in-memory fakes.
 */
export interface HandlerPorts extends Ports {
  /** The table itself, for the health probe. */
  table: Table;
  /** A run with its tasks, files and interrupts, in one read (`GET /v1/runs/{id}`). */
  snapshots: RunSnapshots;
  apiKeys: ApiKeyStore;
  listings: Listings;
  streamTokens: StreamTokenStore;
  /** Each tenant's own settings (`GET/PUT /v1/settings`), not the deployment's (`settings`). */
  tenantSettings: TenantSettingsStore;
  toolSources: ToolSourceStore;
  /** Seals and opens secrets at rest (tool source headers) with the stack's KMS key (shared/secrets/envelope.ts). */
  secrets: {
    seal(plaintext: string, context: Record<string, string>): Promise<SealedSecret>;
    open(sealed: SealedSecret, context: Record<string, string>): Promise<string>;
  };
}

/** The name of a port a handler can be wired with. */
export type PortName = Exclude<keyof HandlerPorts, "settings">;

/** The ports named, and the settings. */
export type PortsOf<K extends PortName> = Pick<HandlerPorts, K | "settings">;

/**
 * What the doors (REST, MCP, A2A, AG-UI, the stream) work with: every port but the model (only the
 * steps call it), the secrets' cipher (only the API's tool source routes seal) and the raw table.
 */
export type DoorPorts = Omit<HandlerPorts, "model" | "secrets" | "table">;
