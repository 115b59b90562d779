import { KMSClient } from "@aws-sdk/client-kms";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { SFNClient } from "@aws-sdk/client-sfn";
import { type BaseServices, createBaseServices } from "./baseServices.js";
import type { Config } from "./config.js";
import { JsonContractModel } from "./llm/jsonContractModel.js";
import { OpenAIModel } from "./llm/openaiModel.js";
import { RoleModel } from "./llm/roleModel.js";
import type { ChatModel } from "./llm/types.js";
import type { Ports } from "./ports/index.js";
import { EnvelopeCipher } from "./secrets/envelope.js";
import { type ApiKeySource, SecretKey } from "./secrets/secretKey.js";
import { ToolSourceStore } from "./store/toolSources.js";
import { catalogWith } from "./tools/builtins.js";
import { McpToolCatalog } from "./tools/mcp/catalog.js";
import { workTools } from "./tools/workTools.js";

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
function modelFor(config: Config): ChatModel {
  const key = config.OPENAI_API_KEY_SECRET_ARN
    ? new SecretKey(new SecretsManagerClient({ region: config.AWS_REGION }), config.OPENAI_API_KEY_SECRET_ARN)
    : undefined;
  const endpoint = (model: string): ChatModel => {
    const openai = new OpenAIModel({
      model,
      baseURL: config.OPENAI_BASE_URL,
      apiKey: key ? () => key.read() : config.OPENAI_API_KEY,
      timeoutMs: config.LLM_TIMEOUT_MS,
      maxRetries: config.LLM_MAX_RETRIES,
      maxTokensField: maxTokensField(config),
    });
    return key ? forgettingRefusedKey(openai, key) : openai;
  };
  const model = new RoleModel(endpoint(config.STEPWISE_MODEL), {
    roles: config.STEPWISE_ROLE_SETTINGS,
    fallback: config.STEPWISE_FALLBACK_MODEL ? endpoint(config.STEPWISE_FALLBACK_MODEL) : undefined,
  });
  return config.STEPWISE_FUNCTION_CALL_MODE === "json" ? new JsonContractModel(model) : model;
}

/** OpenAI and Azure OpenAI take `max_completion_tokens` (their reasoning models reject `max_tokens`); other servers `max_tokens`. */
function maxTokensField(config: Config): "max_tokens" | "max_completion_tokens" {
  if (config.STEPWISE_MAX_TOKENS_FIELD !== "auto") return config.STEPWISE_MAX_TOKENS_FIELD;
  const host = config.OPENAI_BASE_URL ? new URL(config.OPENAI_BASE_URL).hostname : "api.openai.com";
  return /(^|\.)openai\.com$|\.openai\.azure\.com$/.test(host) ? "max_completion_tokens" : "max_tokens";
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
