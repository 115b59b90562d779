import { z } from "zod";
import { HISTORY_EVENT_LIMIT, MIN_HISTORY_EVENT_BUDGET } from "../../shared/contracts/historyBudget.js";
import { MAX_INPUT_BYTES_CEILING } from "../../shared/contracts/inputLimits.js";
import { MAX_SANDBOXES_CEILING } from "../../shared/contracts/sandbox.js";
import { MAX_SANDBOX_MEMORY_MB } from "../../shared/contracts/sandboxMemory.js";
import { RoleSettingsInput } from "../../shared/llm/roleSettings.js";

const positiveInt = z.coerce.number().int().positive();
const flag = z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]);
/** "*", or origins (scheme://host[:port], no path) separated by commas. */
const CORS_ORIGINS = /^\s*(\*|https?:\/\/[^\s/,]+(\s*,\s*https?:\/\/[^\s/,]+)*)\s*$/;
/** A complete Secrets Manager ARN: …:secret:<name>-<6 characters>, as IAM policies need it. */
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;
const secretArn = (setting: string) =>
  z
    .string()
    .regex(
      SECRET_ARN,
      `${setting} must be the secret's complete ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>), as \`aws secretsmanager describe-secret\` prints it`,
    );

/**
 * What a deployment can set: StepwiseProps and `cdk deploy -c name=value` take the same names,
 * checked here at synth. Settings in FUNCTION_ENVIRONMENT reach every function's environment.
 */
export const DeploymentSettings = z
  .object({
    /** Model name sent to the provider. */
    model: z.string().min(1).optional(),
    /** An OpenAI-compatible endpoint; unset means api.openai.com. */
    openAiBaseUrl: z.url().optional(),
    /** The Secrets Manager secret (a plain string) holding the model API key. */
    openAiApiKeySecretArn: secretArn("openAiApiKeySecretArn").optional(),
    /** The guardrails' moderation endpoint (OpenAI-compatible /v1/moderations) when the model's has none; unset: the model's. */
    moderationBaseUrl: z.url().optional(),
    /** The Secrets Manager secret holding moderationBaseUrl's key (the model's key is never sent there). */
    moderationApiKeySecretArn: secretArn("moderationApiKeySecretArn").optional(),
    /** The moderation model asked (default omni-moderation-latest); a check's own `model` wins. */
    moderationModel: z.string().min(1).max(128).optional(),
    functionCallMode: z.enum(["native", "json"]).optional(),
    /** Per-role generation settings (model, temperature, maxOutputTokens, reasoningEffort), as an object or its JSON. */
    roleSettings: RoleSettingsInput.optional(),
    /** A second model on the same endpoint, used when the first stays unavailable after its retries. */
    fallbackModel: z.string().min(1).optional(),
    /** The output limit's field name: auto (max_completion_tokens for OpenAI and Azure, else max_tokens). */
    maxTokensField: z.enum(["auto", "max_tokens", "max_completion_tokens"]).optional(),
    /** Name each session after its first answered turn (one call of the `title` role, else the router's model). */
    sessionTitles: flag.optional(),
    /** Default budgets, bounded as a run's own are (shared/contracts/run.ts, RunBudgets). */
    maxPlanIterations: positiveInt.max(20).optional(),
    maxAgentRounds: positiveInt.max(50).optional(),
    /**
     * History events one execution may use before the run continues in a new one (Step Functions
     * stops an execution at 25,000; shared/contracts/historyBudget.ts).
     */
    historyEventBudget: positiveInt.min(MIN_HISTORY_EVENT_BUDGET).max(HISTORY_EVENT_LIMIT).optional(),
    contextBudgetTokens: positiveInt.optional(),
    toolConcurrency: positiveInt.optional(),
    maxActiveRunsPerTenant: positiveInt.optional(),
    /** run_code calls one tenant may have running at once (a tenant may set fewer). */
    maxSandboxesPerTenant: positiveInt.max(MAX_SANDBOXES_CEILING).optional(),
    maxOpenStreamsPerTenant: positiveInt.max(1_000).optional(),
    maxInputBytes: positiveInt.max(MAX_INPUT_BYTES_CEILING).optional(),
    maxInputChars: z.never({ error: "maxInputChars is now maxInputBytes: a run's input is counted in UTF-8 bytes" }).optional(),
    llmTimeoutMs: positiveInt.optional(),
    llmMaxRetries: z.coerce.number().int().min(0).max(10).optional(),
    retentionDays: positiveInt.optional(),
    streamMaxSeconds: positiveInt.max(840).optional(),
    streamHeartbeatMs: positiveInt.optional(),
    mcpCallTimeoutMs: positiveInt.optional(),
    mcpConnectTimeoutMs: positiveInt.optional(),
    toolCatalogCacheMs: z.coerce.number().int().min(0).max(5_000).optional(),
    /** Files: the upload size limit (bytes; at most 5 GiB), how long a download link works (seconds). */
    maxUploadBytes: positiveInt.max(5 * 1024 * 1024 * 1024).optional(),
    /** Images shown to a vision model: bytes per image and per request (a data URL in the request body). */
    imageMaxBytes: positiveInt.max(20 * 1024 * 1024).optional(),
    imageRequestMaxBytes: positiveInt.max(50 * 1024 * 1024).optional(),
    // A presigned link stops working when the credentials that signed it expire: a Lambda role's
    // session credentials can be as young as an hour old, so links last at most one hour.
    downloadLinkSeconds: positiveInt.max(3_600).optional(),
    /** run_code: wall time and memory of one call, within the sandbox function (90 s; its memory budget, sandboxMemory.ts). */
    sandboxTimeoutMs: positiveInt.max(85_000).optional(),
    sandboxMemoryMb: positiveInt.min(64).max(MAX_SANDBOX_MEMORY_MB).optional(),
    /**
     * run_code's runtime: "agentcore" (AgentCore Code Interpreter: pandas, numpy, matplotlib, a session
     * per task) or "pyodide" (the sandbox function: the standard library). Default: agentcore where the
     * stack's region has it, else pyodide.
     */
    sandboxRuntime: z.enum(["agentcore", "pyodide"]).optional(),
    /** How long a task's interpreter session may live at most (seconds; AgentCore allows 8 hours). */
    codeInterpreterSessionSeconds: positiveInt.min(60).max(28_800).optional(),
    /** Concurrent executions reserved for the sandbox function (none by default). */
    sandboxReservedConcurrency: positiveInt.optional(),
    /** web_fetch limits, and whether plain http may be fetched (loopback never on AWS). */
    webFetchTimeoutMs: positiveInt.optional(),
    webFetchMaxBytes: positiveInt.optional(),
    webFetchMaxRedirects: z.coerce.number().int().min(0).max(10).optional(),
    webFetchAllowHttp: flag.optional(),
    /** web_search and deep_search: which provider (none: not offered), SearXNG's address, the search APIs' keys (Secrets Manager secrets, like the model's). */
    webSearchProvider: z.enum(["none", "searxng", "files", "tavily", "brave"]).optional(),
    searxngUrl: z.url().optional(),
    tavilyApiKeySecretArn: secretArn("tavilyApiKeySecretArn").optional(),
    braveApiKeySecretArn: secretArn("braveApiKeySecretArn").optional(),
    /** Browsers: origins that may call the API and the stream (none by default: the console is same-origin). */
    corsAllowedOrigins: z
      .string()
      .regex(
        CORS_ORIGINS,
        "corsAllowedOrigins must be origins separated by commas (scheme and host, optionally a port, no path), e.g. https://app.example.com,https://admin.example.com, or * for any",
      )
      .optional(),
    /** How long a browser's stream token stays valid (seconds; short-lived by design). */
    streamTokenSeconds: positiveInt.max(3_600).optional(),
    /** The model's prices in USD per million prompt / completion tokens, for the estimated cost. */
    modelPriceInputPerMtok: z.coerce.number().min(0).optional(),
    modelPriceOutputPerMtok: z.coerce.number().min(0).optional(),
    /** The price table for estimated costs: JSON, model → [USD per million prompt tokens, completion tokens]. */
    modelPrices: z
      .string()
      .refine((text) => {
        try {
          const table = JSON.parse(text);
          return (
            typeof table === "object" &&
            table !== null &&
            Object.values(table).every((p) => Array.isArray(p) && p.length === 2 && p.every((n) => typeof n === "number" && n >= 0))
          );
        } catch {
          return false;
        }
      }, 'modelPrices must be JSON like {"gpt-4o-mini": [0.15, 0.6]}')
      .optional(),
    /**
     * Memory of the steps that run an agent (MB; 512 by default): a document is converted whole (up
     * to 32 MB, several times that while parsed); bigger text files are read by range.
     */
    agentMemoryMb: z.coerce.number().int().min(512).max(10_240).optional(),
    /** Executors at once in "Execute tasks" (an inline Map allows 40). */
    maxConcurrency: z.coerce.number().int().min(1).max(40).optional(),
    /**
     * The account's Lambda concurrent-executions quota in the region (1,000 by default; a new
     * account often has 10): synth warns when the reservations or a run's executors do not fit it.
     */
    accountConcurrency: positiveInt.optional(),
    /** How long a run waits for a person. */
    interruptTimeoutHours: z.coerce
      .number()
      .positive()
      .max(24 * 7)
      .optional(),
    /** Concurrency reserved for the public API and the stream (none by default: see the README on the account's quota). */
    apiReservedConcurrency: positiveInt.optional(),
    streamReservedConcurrency: positiveInt.optional(),
    /** HTTP API stage throttling (requests per second, burst). */
    apiRateLimit: positiveInt.optional(),
    apiBurstLimit: positiveInt.optional(),
    /** Alarms notify this address through an SNS topic the stack creates. */
    alarmEmail: z.email().optional(),
    /** The table cannot be deleted by accident (default true). */
    deletionProtection: flag.optional(),
  })
  .refine((s) => s.webSearchProvider !== "searxng" || s.searxngUrl, {
    message:
      "webSearchProvider=searxng needs searxngUrl (the SearXNG instance's address), e.g. `cdk deploy -c webSearchProvider=searxng -c searxngUrl=https://search.example.com`",
  })
  .refine((s) => s.webSearchProvider !== "tavily" || s.tavilyApiKeySecretArn, {
    message:
      "webSearchProvider=tavily needs tavilyApiKeySecretArn (a Secrets Manager secret holding the Tavily API key), e.g. `cdk deploy -c webSearchProvider=tavily -c tavilyApiKeySecretArn=arn:aws:secretsmanager:…`",
  })
  .refine((s) => s.webSearchProvider !== "brave" || s.braveApiKeySecretArn, {
    message:
      "webSearchProvider=brave needs braveApiKeySecretArn (a Secrets Manager secret holding the Brave Search API key), e.g. `cdk deploy -c webSearchProvider=brave -c braveApiKeySecretArn=arn:aws:secretsmanager:…`",
  })
  .refine((s) => !s.moderationApiKeySecretArn || s.moderationBaseUrl, {
    message:
      "moderationApiKeySecretArn is the key of moderationBaseUrl: give that too (without it the model's endpoint is asked, with the model's key)",
  })
  .refine((s) => s.openAiApiKeySecretArn || s.openAiBaseUrl, {
    message:
      "Stepwise needs a model: give openAiApiKeySecretArn (a Secrets Manager secret holding the API key) or openAiBaseUrl (an OpenAI-compatible endpoint that needs no key), e.g. `cdk deploy -c openAiApiKeySecretArn=arn:aws:secretsmanager:…`",
  });
export type DeploymentSettings = z.infer<typeof DeploymentSettings>;

/** Each setting's variable in the functions' environment (shared/settings.ts reads them). */
export const FUNCTION_ENVIRONMENT = {
  model: "STEPWISE_MODEL",
  openAiBaseUrl: "OPENAI_BASE_URL",
  openAiApiKeySecretArn: "OPENAI_API_KEY_SECRET_ARN",
  moderationBaseUrl: "MODERATION_BASE_URL",
  moderationApiKeySecretArn: "MODERATION_API_KEY_SECRET_ARN",
  moderationModel: "MODERATION_MODEL",
  functionCallMode: "STEPWISE_FUNCTION_CALL_MODE",
  roleSettings: "STEPWISE_ROLE_SETTINGS",
  fallbackModel: "STEPWISE_FALLBACK_MODEL",
  maxTokensField: "STEPWISE_MAX_TOKENS_FIELD",
  sessionTitles: "STEPWISE_SESSION_TITLES",
  maxPlanIterations: "MAX_PLAN_ITERATIONS",
  historyEventBudget: "HISTORY_EVENT_BUDGET",
  maxAgentRounds: "MAX_AGENT_ROUNDS",
  contextBudgetTokens: "CONTEXT_BUDGET_TOKENS",
  toolConcurrency: "TOOL_CONCURRENCY",
  maxActiveRunsPerTenant: "MAX_ACTIVE_RUNS_PER_TENANT",
  maxSandboxesPerTenant: "MAX_SANDBOXES_PER_TENANT",
  maxOpenStreamsPerTenant: "MAX_OPEN_STREAMS_PER_TENANT",
  maxInputBytes: "MAX_INPUT_BYTES",
  llmTimeoutMs: "LLM_TIMEOUT_MS",
  llmMaxRetries: "LLM_MAX_RETRIES",
  retentionDays: "RETENTION_DAYS",
  streamMaxSeconds: "STREAM_MAX_SECONDS",
  streamHeartbeatMs: "STREAM_HEARTBEAT_MS",
  mcpCallTimeoutMs: "MCP_CALL_TIMEOUT_MS",
  mcpConnectTimeoutMs: "MCP_CONNECT_TIMEOUT_MS",
  toolCatalogCacheMs: "TOOL_CATALOG_CACHE_MS",
  maxUploadBytes: "MAX_UPLOAD_BYTES",
  imageMaxBytes: "IMAGE_MAX_BYTES",
  imageRequestMaxBytes: "IMAGE_REQUEST_MAX_BYTES",
  downloadLinkSeconds: "DOWNLOAD_LINK_SECONDS",
  sandboxTimeoutMs: "SANDBOX_TIMEOUT_MS",
  sandboxMemoryMb: "SANDBOX_MEMORY_MB",
  sandboxRuntime: "SANDBOX_RUNTIME",
  codeInterpreterSessionSeconds: "CODE_INTERPRETER_SESSION_SECONDS",
  webFetchTimeoutMs: "WEB_FETCH_TIMEOUT_MS",
  webFetchMaxBytes: "WEB_FETCH_MAX_BYTES",
  webFetchMaxRedirects: "WEB_FETCH_MAX_REDIRECTS",
  webFetchAllowHttp: "WEB_FETCH_ALLOW_HTTP",
  webSearchProvider: "WEB_SEARCH_PROVIDER",
  searxngUrl: "SEARXNG_URL",
  tavilyApiKeySecretArn: "TAVILY_API_KEY_SECRET_ARN",
  braveApiKeySecretArn: "BRAVE_API_KEY_SECRET_ARN",
  corsAllowedOrigins: "CORS_ALLOWED_ORIGINS",
  streamTokenSeconds: "STREAM_TOKEN_SECONDS",
  modelPriceInputPerMtok: "MODEL_PRICE_INPUT_PER_MTOK",
  modelPriceOutputPerMtok: "MODEL_PRICE_OUTPUT_PER_MTOK",
  modelPrices: "MODEL_PRICES",
} as const satisfies Partial<Record<keyof DeploymentSettings, string>>;

/**
 * The regions where Amazon Bedrock AgentCore Code Interpreter is offered (AWS's list when this was
 * written; docs/operating.md): elsewhere run_code runs on the sandbox function (Pyodide).
 */
export const AGENTCORE_REGIONS = [
  "us-east-1",
  "us-east-2",
  "us-west-2",
  "ap-south-1",
  "ap-southeast-1",
  "ap-southeast-2",
  "ap-northeast-1",
  "eu-central-1",
  "eu-west-1",
] as const;

/**
 * run_code's runtime for a stack in `region` (undefined: not known at synth): as set, which must be
 * offered there; else AgentCore where the region has it, Pyodide elsewhere.
 */
export function sandboxRuntimeFor(setting: DeploymentSettings["sandboxRuntime"], region: string | undefined): "agentcore" | "pyodide" {
  const offered = region !== undefined && (AGENTCORE_REGIONS as readonly string[]).includes(region);
  if (setting === "agentcore" && region !== undefined && !offered)
    throw new Error(
      `Invalid Stepwise settings: sandboxRuntime=agentcore, but AgentCore Code Interpreter is not offered in ${region} (it is in ${AGENTCORE_REGIONS.join(", ")}); use sandboxRuntime=pyodide there`,
    );
  return setting ?? (offered ? "agentcore" : "pyodide");
}

/** Lambda's default concurrent-executions quota, and what it keeps unreserved in every account. */
export const DEFAULT_ACCOUNT_CONCURRENCY = 1_000;
export const UNRESERVED_CONCURRENCY = 100;
/**
 * Functions busy beside a run's executors at its busiest: the step that waits on them (Plan) and
 * the API, the stream and the notifier serving it.
 */
export const BESIDE_EXECUTORS = 4;

/**
 * What does not fit the account's concurrency quota: Lambda keeps 100 executions unreserved, so
 * reservations above quota − 100 fail the deploy; executors beyond what is left are throttled and
 * retried for minutes while the others hold their slots. Empty when everything fits.
 */
export function concurrencyWarnings(settings: DeploymentSettings): string[] {
  const quota = settings.accountConcurrency ?? DEFAULT_ACCOUNT_CONCURRENCY;
  const executors = settings.maxConcurrency ?? 8;
  const reserved =
    (settings.apiReservedConcurrency ?? 0) + (settings.streamReservedConcurrency ?? 0) + (settings.sandboxReservedConcurrency ?? 0);
  const warnings: string[] = [];
  const reservable = Math.max(0, quota - UNRESERVED_CONCURRENCY);
  if (reserved > reservable) {
    warnings.push(
      `Reserved concurrency (apiReservedConcurrency + streamReservedConcurrency + sandboxReservedConcurrency = ${reserved}) exceeds what an account with a quota of ${quota} concurrent executions can reserve (${reservable}: Lambda keeps ${UNRESERVED_CONCURRENCY} unreserved); the deploy would fail. Leave them unset, or raise the quota (Service Quotas) and set accountConcurrency.`,
    );
  }
  const busy = executors + BESIDE_EXECUTORS;
  if (busy > quota - reserved) {
    warnings.push(
      `One run can keep ${busy} functions busy (maxConcurrency ${executors} executors + ${BESIDE_EXECUTORS} beside them), more than the ${quota - reserved} unreserved concurrent executions of an account with a quota of ${quota}: steps would be throttled and retried for minutes. Use the small-account profile (-c maxConcurrency=2, no reservations; docs/operating.md) or raise the quota.`,
    );
  }
  return warnings;
}

/** Checks settings (props or context) and says exactly what is wrong. */
export function parseSettings(input: Record<string, unknown>): DeploymentSettings {
  const known = new Set(Object.keys(DeploymentSettings.def.shape));
  const defined = Object.fromEntries(Object.entries(input).filter(([k, v]) => known.has(k) && v !== undefined && v !== ""));
  const parsed = DeploymentSettings.safeParse(defined);
  if (!parsed.success) {
    throw new Error(
      `Invalid Stepwise settings: ${parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ")}`,
    );
  }
  return parsed.data;
}

/** The settings given as `-c name=value` (or in cdk.json), with the model ones also from the environment. */
export function settingsFromContext(
  tryGetContext: (key: string) => unknown,
  env: Record<string, string | undefined> = process.env,
): DeploymentSettings {
  const keys = Object.keys(DeploymentSettings.def.shape) as (keyof DeploymentSettings)[];
  const given: Record<string, unknown> = Object.fromEntries(keys.map((key) => [key, tryGetContext(key)]));
  given.model ??= env.STEPWISE_MODEL;
  given.openAiBaseUrl ??= env.OPENAI_BASE_URL;
  given.openAiApiKeySecretArn ??= env.OPENAI_API_KEY_SECRET_ARN;
  return parseSettings(given);
}

/** The functions' environment for these settings (only what is set; shared/settings.ts has the defaults). */
export function functionEnvironment(settings: DeploymentSettings): Record<string, string> {
  return Object.fromEntries(
    Object.entries(FUNCTION_ENVIRONMENT)
      .filter(([key]) => settings[key as keyof DeploymentSettings] !== undefined)
      .map(([key, variable]) => {
        const value = settings[key as keyof DeploymentSettings];
        return [variable, typeof value === "object" ? JSON.stringify(value) : String(value)];
      }),
  );
}
