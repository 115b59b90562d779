import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { JsonContractModel } from "../shared/llm/jsonContractModel.js";
import { OpenAIModel } from "../shared/llm/openaiModel.js";
import { withOutputLimit } from "../shared/llm/outputLimit.js";
import { RoleModel } from "../shared/llm/roleModel.js";
import { type ChatModel, moderationOf } from "../shared/llm/types.js";
import type { ApiKeySource } from "../shared/ports/apiKeySource.js";
import { SecretKey } from "../shared/secrets/secretKey.js";
import type { Settings } from "../shared/settings.js";

/**
 * The model's adapter: the OpenAI client with its per-role settings, fallback and output limit.
 * Heavy to load, so functions/modelPort.ts imports this module when a handler first calls the model.
 */

/** The model, forgetting the key when the provider refuses it (HTTP 401), so the next call reads it again. */
export function forgettingRefusedKey(model: ChatModel, key: ApiKeySource): ChatModel {
  const status = (error: unknown): unknown =>
    (error as { status?: unknown; cause?: { status?: unknown } })?.status ?? (error as { cause?: { status?: unknown } })?.cause?.status;
  return {
    name: model.name,
    ...moderationOf(model),
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
export function modelFor(settings: Settings["model"], region: string): ChatModel {
  const secrets = new SecretsManagerClient({ region });
  const key = settings.apiKeySecretArn ? new SecretKey(secrets, settings.apiKeySecretArn) : undefined;
  const openaiModel = (model: string) =>
    new OpenAIModel({
      model,
      baseURL: settings.baseUrl,
      apiKey: key ? () => key.read() : settings.apiKey,
      timeoutMs: settings.timeoutMs,
      maxRetries: settings.maxRetries,
      maxTokensField: maxTokensField(settings),
      moderationModel: settings.moderation?.model,
    });
  const endpoint = (model: string): ChatModel => {
    const openai = openaiModel(model);
    const limited = withOutputLimit(openai);
    return key ? forgettingRefusedKey(limited, key) : limited;
  };
  const model = new RoleModel(endpoint(settings.name), {
    roles: settings.roles,
    fallback: settings.fallback ? endpoint(settings.fallback) : undefined,
  });
  const chat = settings.functionCallMode === "json" ? new JsonContractModel(model) : model;
  // The guardrails' moderation checks ask the model's endpoint's /v1/moderations, or the one configured for them.
  const moderation = moderationEndpoint(settings, secrets) ?? openaiModel(settings.name);
  return { name: chat.name, complete: (request) => chat.complete(request), ...moderationOf(moderation) };
}

/**
 * The guardrails' moderation checks ask `/v1/moderations` of the model's endpoint, or of the one
 * MODERATION_BASE_URL names (with its own key: the model's is never sent to another host).
 */
export function moderationEndpoint(settings: Settings["model"], secrets: SecretsManagerClient): OpenAIModel | undefined {
  const { moderation } = settings;
  if (!moderation?.baseUrl) return undefined;
  const key = moderation.apiKeySecretArn ? new SecretKey(secrets, moderation.apiKeySecretArn) : undefined;
  return new OpenAIModel({
    model: settings.name,
    baseURL: moderation.baseUrl,
    apiKey: key ? () => key.read() : moderation.apiKey,
    timeoutMs: settings.timeoutMs,
    moderationModel: moderation.model,
  });
}

/** OpenAI and Azure OpenAI take `max_completion_tokens` (their reasoning models reject `max_tokens`); other servers `max_tokens`. */
function maxTokensField(settings: Settings["model"]): "max_tokens" | "max_completion_tokens" {
  if (settings.maxTokensField !== "auto") return settings.maxTokensField;
  const host = settings.baseUrl ? new URL(settings.baseUrl).hostname : "api.openai.com";
  return /(^|\.)openai\.com$|\.openai\.azure\.com$/.test(host) ? "max_completion_tokens" : "max_tokens";
}
