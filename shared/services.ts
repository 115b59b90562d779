import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { KMSClient } from "@aws-sdk/client-kms";
import type { SFNClient } from "@aws-sdk/client-sfn";
import { createBaseServices, type BaseServices } from "./baseServices.js";
import type { Config } from "./config.js";
import { JsonContractModel } from "./llm/jsonContractModel.js";
import { OpenAIModel } from "./llm/openaiModel.js";
import type { ChatModel } from "./llm/types.js";
import type { Ports } from "./ports/index.js";
import { EnvelopeCipher } from "./secrets/envelope.js";
import { ToolSourceStore } from "./store/toolSources.js";
import { catalogWith } from "./tools/builtins.js";
import { McpToolCatalog } from "./tools/mcp/catalog.js";
import { workTools } from "./tools/workTools.js";

export type { BaseServices } from "./baseServices.js";

/**
 * Everything a handler that runs agents or lists their tools needs, built from configuration once
 * per cold start, injectable in tests: the base services (shared/baseServices.ts), the model, the
 * tool catalog and the tool sources.
 */
export interface Services extends BaseServices, Pick<Ports, "model" | "tools"> {
  toolSources: ToolSourceStore;
  /** Seals and opens secrets at rest (tool source headers) with the stack's KMS key. */
  secrets: EnvelopeCipher;
}

/** Reads the secret once per container, when the first model call needs it. */
function secretReader(secretId: string, region: string): () => Promise<string> {
  let value: Promise<string> | undefined;
  return () => {
    value ??= new SecretsManagerClient({ region })
      .send(new GetSecretValueCommand({ SecretId: secretId }))
      .then((secret) => secret.SecretString ?? "")
      .catch((error) => {
        value = undefined; // try again on the next call
        throw error;
      });
    return value;
  };
}

/** The configured model; for models without native tool calling, behind the JSON contract. */
function modelFor(config: Config): ChatModel {
  const model = new OpenAIModel({
    model: config.STEPWISE_MODEL,
    baseURL: config.OPENAI_BASE_URL,
    apiKey: config.OPENAI_API_KEY_SECRET_ARN ? secretReader(config.OPENAI_API_KEY_SECRET_ARN, config.AWS_REGION) : config.OPENAI_API_KEY,
    timeoutMs: config.LLM_TIMEOUT_MS,
    maxRetries: config.LLM_MAX_RETRIES,
  });
  return config.STEPWISE_FUNCTION_CALL_MODE === "json" ? new JsonContractModel(model) : model;
}

/** The base services given (or built), with the model and the tools added; `overrides` replace any of them. */
export function createServices(config: Config, overrides: Partial<Services> & { sfn?: SFNClient; base?: BaseServices } = {}): Services {
  const { base: given, ...replaced } = overrides;
  const base = given ?? createBaseServices(config, replaced);
  const toolSources = overrides.toolSources ?? new ToolSourceStore(base.table, config.RETENTION_DAYS);
  const secrets = overrides.secrets ?? new EnvelopeCipher(new KMSClient({ region: config.AWS_REGION }), config.TOOL_SOURCES_KMS_KEY_ID);
  return {
    ...base,
    toolSources,
    secrets,
    tools: catalogWith(
      new McpToolCatalog({
        sources: toolSources,
        cipher: secrets,
        events: base.events,
        policy: { allowLoopback: config.TOOL_SOURCE_ALLOW_LOOPBACK, allowHttp: config.TOOL_SOURCE_ALLOW_HTTP },
        callTimeoutMs: config.MCP_CALL_TIMEOUT_MS,
        connectTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS,
        cacheMs: config.TOOL_CATALOG_CACHE_MS,
      }),
      workTools(config),
    ),
    model: modelFor(config),
    ...replaced,
  };
}
