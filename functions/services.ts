import { BedrockAgentCoreClient } from "@aws-sdk/client-bedrock-agentcore";
import { KMSClient } from "@aws-sdk/client-kms";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { BaseServices } from "../shared/baseServices.js";
import { JsonContractModel } from "../shared/llm/jsonContractModel.js";
import { OpenAIModel } from "../shared/llm/openaiModel.js";
import { withOutputLimit } from "../shared/llm/outputLimit.js";
import { RoleModel } from "../shared/llm/roleModel.js";
import type { ChatModel } from "../shared/llm/types.js";
import { EnvelopeCipher } from "../shared/secrets/envelope.js";
import { type ApiKeySource, SecretKey } from "../shared/secrets/secretKey.js";
import type { Services } from "../shared/services.js";
import type { Settings } from "../shared/settings.js";
import { ToolSourceStore } from "../shared/store/toolSources.js";
import { catalogWith } from "../shared/tools/builtins.js";
import { McpToolCatalog } from "../shared/tools/mcp/catalog.js";
import { type WorkToolClients, workTools } from "../shared/tools/workTools.js";
import { getBaseServices } from "./baseServices.js";

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

/** The model, forgetting the key when the provider refuses it (HTTP 401), so the next call reads it again. */
export function forgettingRefusedKey(model: ChatModel, key: ApiKeySource): ChatModel {
  const status = (error: unknown): unknown =>
    (error as { status?: unknown; cause?: { status?: unknown } })?.status ?? (error as { cause?: { status?: unknown } })?.cause?.status;
  return {
    name: model.name,
    complete: (request) =>
      model.complete(request).catch((error: unknown) => {
        if (status(error) === 401) key.forget();
        throw error;
      }),
  };
}

/**
 * The configured model with its per-role settings and fallback; for models without native tool
 * calling, behind the JSON contract.
 */
export function modelFor(settings: Settings["model"], secrets: SecretsManagerClient): ChatModel {
  const key = settings.apiKeySecretArn ? new SecretKey(secrets, settings.apiKeySecretArn) : undefined;
  const endpoint = (model: string): ChatModel => {
    const openai = new OpenAIModel({
      model,
      baseURL: settings.baseUrl,
      apiKey: key ? () => key.read() : settings.apiKey,
      timeoutMs: settings.timeoutMs,
      maxRetries: settings.maxRetries,
      maxTokensField: maxTokensField(settings),
    });
    const limited = withOutputLimit(openai);
    return key ? forgettingRefusedKey(limited, key) : limited;
  };
  const model = new RoleModel(endpoint(settings.name), {
    roles: settings.roles,
    fallback: settings.fallback ? endpoint(settings.fallback) : undefined,
  });
  return settings.functionCallMode === "json" ? new JsonContractModel(model) : model;
}

/** OpenAI and Azure OpenAI take `max_completion_tokens` (their reasoning models reject `max_tokens`); other servers `max_tokens`. */
function maxTokensField(settings: Settings["model"]): "max_tokens" | "max_completion_tokens" {
  if (settings.maxTokensField !== "auto") return settings.maxTokensField;
  const host = settings.baseUrl ? new URL(settings.baseUrl).hostname : "api.openai.com";
  return /(^|\.)openai\.com$|\.openai\.azure\.com$/.test(host) ? "max_completion_tokens" : "max_tokens";
}

/** The base services with the model and the tools added over `clients`; `overrides` replace any of them (tests). */
export function createServices(base: BaseServices, clients: AgentClients, overrides: Partial<Services> = {}): Services {
  const { settings } = base;
  const toolSources = overrides.toolSources ?? new ToolSourceStore(base.table, settings.retentionDays);
  const secrets = overrides.secrets ?? new EnvelopeCipher(clients.kms, settings.toolSources.kmsKeyId);
  const { toolSources: sources } = settings;
  return {
    ...base,
    toolSources,
    secrets,
    tools: catalogWith(
      new McpToolCatalog({
        sources: toolSources,
        cipher: secrets,
        events: base.events,
        policy: sources.policy,
        callTimeoutMs: sources.callTimeoutMs,
        connectTimeoutMs: sources.connectTimeoutMs,
        cacheMs: sources.catalogCacheMs,
      }),
      workTools(settings, clients),
    ),
    model: modelFor(settings.model, clients.secretsManager),
    ...overrides,
  };
}

let services: Services | undefined;

/** The base services with the model and the tools, built on first use and reused for the life of the Lambda container. */
export function getServices(): Services {
  const base = getBaseServices();
  services ??= createServices(base, agentClients(base.settings.region));
  return services;
}
