import { BedrockAgentCoreClient } from "@aws-sdk/client-bedrock-agentcore";
import { KMSClient } from "@aws-sdk/client-kms";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { HandlerPorts } from "../shared/handlerPorts.js";
import type { ToolCatalog } from "../shared/ports/toolCatalog.js";
import { EnvelopeCipher } from "../shared/secrets/envelope.js";
import type { Settings } from "../shared/settings.js";
import { catalogWith } from "../shared/tools/builtins.js";
import { McpToolCatalog } from "../shared/tools/mcp/catalog.js";
import { type WorkToolClients, workTools } from "./workTools.js";

/**
 * The tools' adapters: the MCP client, the work tools' libraries and clients, KMS. Heavy to load,
 * so functions/toolPorts.ts imports this module when a handler first asks for a tool or a secret.
 */

/** The clients an agent's handler adds to the base ones: the tool sources' key, the model's and search APIs' secrets, the sandbox. */
export interface AgentClients extends WorkToolClients {
  kms: KMSClient;
}

export function agentClients(region: string): AgentClients {
  return {
    kms: new KMSClient({ region }),
    secretsManager: new SecretsManagerClient({ region }),
    lambda: new LambdaClient({ region }),
    agentCore: new BedrockAgentCoreClient({ region }),
  };
}

/** The tool catalog: the built-ins and the tenant's tool sources (MCP), with the work tools over `clients`. */
export function toolCatalog(
  settings: Pick<Settings, "toolSources" | "sandbox" | "webFetch" | "webSearch">,
  ports: Pick<HandlerPorts, "toolSources" | "secrets" | "events" | "runs" | "tenantSettings" | "tenantLeases">,
  clients: WorkToolClients,
): ToolCatalog {
  const { toolSources: sources } = settings;
  return catalogWith(
    new McpToolCatalog({
      sources: ports.toolSources,
      cipher: ports.secrets,
      events: ports.events,
      policy: sources.policy,
      callTimeoutMs: sources.callTimeoutMs,
      connectTimeoutMs: sources.connectTimeoutMs,
      cacheMs: sources.catalogCacheMs,
    }),
    workTools(settings, clients, ports),
  );
}

/** Seals and opens tool source headers with the stack's KMS key. */
export function cipher(settings: Pick<Settings, "toolSources">, kms: KMSClient): EnvelopeCipher {
  return new EnvelopeCipher(kms, settings.toolSources.kmsKeyId);
}
