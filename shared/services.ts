import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { SFNClient } from "@aws-sdk/client-sfn";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { Config } from "./config.js";
import { JsonContractModel } from "./llm/jsonContractModel.js";
import { OpenAIModel } from "./llm/openaiModel.js";
import { RoleModel } from "./llm/roleModel.js";
import type { ChatModel } from "./llm/types.js";
import { ApiKeyStore } from "./store/apiKeys.js";
import { EventLog } from "./store/events.js";
import { S3Client } from "@aws-sdk/client-s3";
import { S3FileStore } from "./store/s3Files.js";
import { EventedFileStore } from "./run/fileEvents.js";
import { catalogWith } from "./tools/builtins.js";
import { workTools } from "./tools/workTools.js";
import { KMSClient } from "@aws-sdk/client-kms";
import { EnvelopeCipher } from "./secrets/envelope.js";
import { ToolSourceStore } from "./store/toolSources.js";
import { McpToolCatalog } from "./tools/mcp/catalog.js";
import { InterruptStore } from "./store/interrupts.js";
import { Journal } from "./store/journal.js";
import { RunStore } from "./store/runs.js";
import { RunSnapshots } from "./store/runSnapshots.js";
import { Table } from "./store/table.js";
import { TaskStore } from "./store/tasks.js";
import { SessionStore } from "./store/sessions.js";
import { Listings } from "./store/listings.js";
import { StreamTokenStore } from "./store/streamTokens.js";
import { ActiveRuns } from "./store/tenants.js";
import { WebhookStore } from "./store/webhooks.js";
import { IdempotencyStore } from "./store/idempotency.js";
import { StepFunctionsExecutions } from "./store/stepFunctions.js";
import type { Ports } from "./ports/index.js";
import { NotifyQueue } from "./webhooks/queue.js";

/**
 * Everything a handler needs, built from configuration once per cold start, injectable in tests:
 * the core's ports (adapters here) and what only the API uses.
 */
export interface Services extends Ports {
  table: Table;
  /** A run with its tasks, files and interrupts, in one read (`GET /v1/runs/{id}`). */
  snapshots: RunSnapshots;
  toolSources: ToolSourceStore;
  /** Seals and opens secrets at rest (tool source headers) with the stack's KMS key. */
  secrets: EnvelopeCipher;
  apiKeys: ApiKeyStore;
  listings: Listings;
  streamTokens: StreamTokenStore;
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

/**
 * The configured model with its per-role settings and fallback; for models without native tool
 * calling, behind the JSON contract.
 */
function modelFor(config: Config): ChatModel {
  const apiKey = config.OPENAI_API_KEY_SECRET_ARN ? secretReader(config.OPENAI_API_KEY_SECRET_ARN, config.AWS_REGION) : config.OPENAI_API_KEY;
  const endpoint = (model: string) =>
    new OpenAIModel({
      model,
      baseURL: config.OPENAI_BASE_URL,
      apiKey,
      timeoutMs: config.LLM_TIMEOUT_MS,
      maxRetries: config.LLM_MAX_RETRIES,
      maxTokensField: maxTokensField(config),
    });
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

/** `sfn`: the Step Functions client the executions adapter uses (tests point it elsewhere). */
export function createServices(config: Config, overrides: Partial<Services> & { sfn?: SFNClient } = {}): Services {
  const { sfn, ...replaced } = overrides;
  const table = overrides.table ?? Table.connect(config.TABLE_NAME, { region: config.AWS_REGION });
  const days = config.RETENTION_DAYS;
  const runs = overrides.runs ?? new RunStore(table, days);
  const events = overrides.events ?? new EventLog(table, days);
  const files = new S3FileStore({
    table,
    s3: new S3Client({ region: config.AWS_REGION }),
    bucket: config.FILES_BUCKET,
    retentionDays: days,
    tenantOf: async (runId) => (await runs.get(runId))?.tenantId,
    downloadLinkSeconds: config.DOWNLOAD_LINK_SECONDS,
  });
  const toolSources = overrides.toolSources ?? new ToolSourceStore(table, days);
  const secrets = overrides.secrets ?? new EnvelopeCipher(new KMSClient({ region: config.AWS_REGION }), config.TOOL_SOURCES_KMS_KEY_ID);
  return {
    config,
    table,
    runs,
    snapshots: new RunSnapshots(table),
    events,
    journal: new Journal(table, days),
    tasks: new TaskStore(table, days),
    files: new EventedFileStore(files, events, runs),
    transfers: files,
    tools: catalogWith(
      new McpToolCatalog({
        sources: toolSources,
        cipher: secrets,
        events,
        policy: { allowLoopback: config.TOOL_SOURCE_ALLOW_LOOPBACK, allowHttp: config.TOOL_SOURCE_ALLOW_HTTP },
        callTimeoutMs: config.MCP_CALL_TIMEOUT_MS,
        connectTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS,
        cacheMs: config.TOOL_CATALOG_CACHE_MS,
      }),
      workTools(config),
    ),
    toolSources,
    secrets,
    apiKeys: new ApiKeyStore(table),
    interrupts: new InterruptStore(table, days),
    webhooks: new WebhookStore(table, days),
    sessions: new SessionStore(table, days),
    listings: new Listings(table),
    streamTokens: new StreamTokenStore(table),
    activeRuns: new ActiveRuns(table),
    notifyQueue: new NotifyQueue(new SQSClient({ region: config.AWS_REGION }), config.NOTIFY_QUEUE_URL, config.DEAD_LETTER_QUEUE_URL),
    model: modelFor(config),
    executions: new StepFunctionsExecutions(sfn ?? new SFNClient({ region: config.AWS_REGION }), config.STATE_MACHINE_ARN),
    idempotency: new IdempotencyStore(table),
    ...replaced,
  };
}
