import type { ToolCatalog } from "../shared/ports/toolCatalog.js";
import type { EnvelopeCipher } from "../shared/secrets/envelope.js";
import type { PortBuilder } from "./wiring.js";

/**
 * The tool catalog and the secrets' cipher of a handler that uses them: the MCP client, the work
 * tools and KMS are loaded when first needed (functions/toolClients.ts), not when the handler's code
 * is imported, so a request that lists no tool and seals no secret never loads them.
 */
/** The tools' adapters' module (the runtime loads it once). Its functions are called by name (`adapters.toolCatalog`), which the IAM-coverage test's reading of the code follows. */
const load = () => import("./toolClients.js");

export const toolsPort: PortBuilder<"tools"> = (parts) => {
  let catalog: Promise<ToolCatalog> | undefined;
  const built = () => {
    catalog ??= load().then((adapters) => {
      const clients = adapters.agentClients(parts.settings.region);
      const secrets = adapters.cipher(parts.settings, clients.kms);
      return adapters.toolCatalog(
        parts.settings,
        {
          toolSources: parts.port("toolSources"),
          events: parts.port("events"),
          secrets,
          // run_code's bound on each tenant's sandboxes running at once.
          runs: parts.port("runs"),
          tenantSettings: parts.port("tenantSettings"),
          tenantLeases: parts.port("tenantLeases"),
        },
        clients,
      );
    });
    return catalog;
  };
  let ready: ToolCatalog | undefined;
  return {
    registryFor: async (tenantId, run) => {
      ready = await built();
      return ready.registryFor(tenantId, run);
    },
    // Nothing is remembered before the catalog is first built.
    invalidate: (tenantId) => ready?.invalidate?.(tenantId),
  };
};

export const secretsPort: PortBuilder<"secrets"> = (parts) => {
  let built: Promise<EnvelopeCipher> | undefined;
  const cipher = () => {
    built ??= load().then((adapters) => adapters.cipher(parts.settings, adapters.agentClients(parts.settings.region).kms));
    return built;
  };
  return {
    seal: async (plaintext, context) => (await cipher()).seal(plaintext, context),
    open: async (sealed, context) => (await cipher()).open(sealed, context),
  };
};
