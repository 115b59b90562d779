import * as z from "zod";
import { HISTORY_EVENT_LIMIT, MIN_HISTORY_EVENT_BUDGET } from "./contracts/historyBudget.js";
import { DEFAULT_MAX_INPUT_BYTES, MAX_INPUT_BYTES_CEILING } from "./contracts/inputLimits.js";
import { MAX_SANDBOXES_CEILING } from "./contracts/sandbox.js";
import { MAX_SANDBOX_MEMORY_MB } from "./contracts/sandboxMemory.js";
import { type RoleSettings, RoleSettingsInput } from "./llm/roleSettings.js";

/** Model → [USD per million prompt tokens, per million completion tokens]. */
export type PriceTable = Record<string, [number, number]>;

/** OpenAI's list prices (USD per million prompt / completion tokens) when this table was written. */
const DEFAULT_MODEL_PRICES: PriceTable = {
  "gpt-4o-mini": [0.15, 0.6],
  "gpt-4o": [2.5, 10],
  "gpt-4.1": [2, 8],
  "gpt-4.1-mini": [0.4, 1.6],
  "gpt-4.1-nano": [0.1, 0.4],
  "o4-mini": [1.1, 4.4],
};

/** Who may be called at an address a user gave: loopback and plain http only where the deployment allows them. */
export interface UrlPolicy {
  allowLoopback: boolean;
  allowHttp: boolean;
}

/** How far a web fetch goes (shared/web/fetchPage.ts). */
export interface FetchLimits {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** As for webhooks: loopback and plain http only where configuration allows them. */
  allowLoopback: boolean;
  allowHttp: boolean;
}

/** A search API's key: the Secrets Manager secret holding it (deployed), or the key itself (locally). */
export type SearchKey = { secretArn: string } | { value: string };

/** web_search and deep_search: which provider (none: the tools are not offered) and what it needs. */
export type WebSearchSettings =
  | { provider: "none" | "files" }
  | { provider: "searxng"; url: string }
  | { provider: "tavily" | "brave"; url: string; key: SearchKey };

/** run_code's runtime: "agentcore" (a Code Interpreter and its sessions) or "pyodide" (the sandbox function). */
export type SandboxSettings = {
  functionName: string;
  timeoutMs: number;
  memoryMb: number;
  /** run_code calls one tenant may have running at once, across all its runs (a tenant may set fewer: `maxSandboxes`). */
  maxPerTenant: number;
} & ({ runtime: "pyodide" } | { runtime: "agentcore"; codeInterpreterId: string; sessionSeconds: number });

/** What AgentCore Code Interpreter (and its local emulation) offers beside the standard library. */
export const AGENTCORE_LIBRARIES = ["pandas", "numpy", "matplotlib"] as const;

/**
 * The deployment's settings, read from the environment once per container (settingsFromEnv) and
 * handed to the core as a value. Endpoints for the AWS SDK clients come from the SDK's own variables
 * (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SFN), so no code knows where it runs.
 */
export interface Settings {
  /** The AWS region of the clients and of the files bucket's address. */
  region: string;
  /** The one DynamoDB table. */
  tableName: string;
  /** The state machine runs start (unset: this function starts none). */
  stateMachineArn?: string;
  /** Days a run's records are kept. */
  retentionDays: number;
  model: {
    /** The model every role uses unless its role settings name another. */
    name: string;
    /** An OpenAI-compatible endpoint (unset: OpenAI's). */
    baseUrl?: string;
    apiKey?: string;
    /** On AWS the key lives in Secrets Manager (never in the template or the function's settings). */
    apiKeySecretArn?: string;
    /** Per-role generation settings: {"summarizer": {"temperature": 0.01}, "planner": {"model": "o4-mini", "reasoningEffort": "low"}}. */
    roles?: RoleSettings;
    /** A second model (same endpoint and key) that answers when the first stays unavailable after its retries. */
    fallback?: string;
    /** The output limit's field: OpenAI and Azure take max_completion_tokens (o-series reject max_tokens), most compatible servers max_tokens. */
    maxTokensField: "auto" | "max_tokens" | "max_completion_tokens";
    timeoutMs: number;
    maxRetries: number;
    /** How the model calls tools: natively, or by the JSON contract in the prompt. */
    functionCallMode: "native" | "json";
    /** After a session's first answered turn, one cheap model call (role `title`) names the session. */
    sessionTitles: boolean;
    /**
     * The guardrails' moderation endpoint (an OpenAI-compatible `/v1/moderations`) when it is not the
     * model's: many providers (DeepSeek, most local servers) have none. Unset: the model's endpoint and key.
     */
    moderation?: { baseUrl?: string; apiKey?: string; apiKeySecretArn?: string; model?: string };
  };
  /**
   * Estimated cost: the price table (OpenAI's list prices by default; a model not in it gets no
   * estimate). The two single prices, when set, price the model whatever the table says.
   */
  prices: { table: PriceTable; inputPerMTok?: number; outputPerMTok?: number };
  /** Budgets, defaults from the seeds. */
  budgets: {
    maxPlanIterations: number;
    maxAgentRounds: number;
    toolConcurrency: number;
    /** Tokens a prompt may use; older turns are cut to fit (whole turns, newest kept). */
    contextTokens: number;
    /**
     * History events one execution may use (Step Functions stops at 25,000): before a plan step, an
     * executor's hand-back or a ReAct turn would pass it, the run continues in a new execution
     * (shared/contracts/historyBudget.ts).
     */
    historyEvents: number;
  };
  limits: {
    /** UTF-8 bytes a run's input may have (shared/contracts/inputLimits.ts). */
    maxInputBytes: number;
    /** Backpressure: runs a tenant may have going at once. */
    maxActiveRunsPerTenant: number;
    /** Streams and protocol calls following a run (each holds a Lambda) a tenant may have open at once; a tenant may set fewer. */
    maxOpenStreamsPerTenant: number;
  };
  /** Where a run's links point. */
  links: {
    /** The API's base URL, for links made where another URL took the request (the stream function's /mcp). */
    api?: string;
    /** The stream's base URL (on AWS its Function URL). */
    stream?: string;
    /** Link runs to the Step Functions console (on AWS). */
    stepFunctionsConsole: boolean;
  };
  stream: {
    pollMs: number;
    /** How long one stream connection lasts: a streamed Lambda is not told when its client leaves (docs/operating.md, "Operating"). */
    maxSeconds: number;
    heartbeatMs: number;
    /** How long a browser's stream token (`POST /v1/runs/{id}/stream-token`) stays valid. */
    tokenSeconds: number;
  };
  cors: {
    /** Origins allowed to call the API and the stream from a browser (comma-separated; "*" for any). The console is same-origin and needs none. */
    allowedOrigins: string;
    /** The console's own origin, allowed too where the stream is on another origin (on AWS: the HTTP API's; set by the stack). */
    consoleOrigin?: string;
  };
  /** Where the built console is (index.html and its assets); unset: no console. */
  consoleAssetsDir?: string;
  /** Webhooks: the notification queue, its dead letters, and who may be called. */
  webhooks: {
    queueUrl?: string;
    deadLetterQueueUrl?: string;
    policy: UrlPolicy;
    retrySchedule: "default" | "fast";
    timeoutMs: number;
    /** How long a rotated signing secret still signs beside the new one. */
    secretOverlapHours: number;
  };
  /** MCP tool sources: the KMS key that seals their header values, who may be called, how long. */
  toolSources: {
    kmsKeyId?: string;
    policy: UrlPolicy;
    callTimeoutMs: number;
    connectTimeoutMs: number;
    /** How long a warm container reuses a tenant's tool list (at most 5 s, so changes show quickly). */
    catalogCacheMs: number;
  };
  /** Files: the bucket that holds their bytes, the upload size limit, how long a download link works. */
  files: {
    bucket: string;
    /** The S3 endpoint the SDK is given (a local one), where download links point instead of the bucket's own address. */
    s3Endpoint?: string;
    maxUploadBytes: number;
    downloadLinkSeconds: number;
    /** Images shown to a vision model (role setting `vision`): at most this many bytes each, and together in one request. */
    imageMaxBytes: number;
    imageRequestMaxBytes: number;
  };
  /**
   * The code sandbox: which runtime runs run_code (AgentCore Code Interpreter, with the data
   * libraries and a session per task; or the sandbox function, Pyodide with the standard library),
   * what it needs, and the limits of one run_code call.
   */
  sandbox: SandboxSettings;
  /** web_fetch: limits, and (as for webhooks) whether loopback and plain http may be fetched. */
  webFetch: FetchLimits;
  webSearch: WebSearchSettings;
  /** Where an ended run's GenAI spans are sent: X-Ray's daemon (`host:port`, or `tcp:host:port udp:host:port`); unset, nowhere. */
  traces?: { xrayDaemonAddress: string };
}

// Fields that validate alike share one schema: zod's schemas are immutable, and each chained call
// (.min(), .int(), .optional()...) builds new instances, a cost every cold start pays.
const text = z.string();
const optionalText = text.optional();
const nonEmpty = text.min(1);
const optionalNonEmpty = nonEmpty.optional();
const url = text.url();
const optionalUrl = url.optional();
const on = z.stringbool().default(true);
const off = z.stringbool().default(false);
const wholeNumber = z.coerce.number().int();
const atLeastZero = wholeNumber.min(0);
const positive = wholeNumber.positive();
const int = (fallback: number) => positive.default(fallback);
const optionalPrice = z.coerce.number().min(0).optional();

const price = z.number().min(0);
const Prices = z.record(nonEmpty, z.tuple([price, price]));

/** The environment variables, their defaults and their validation: the only place their names appear. */
const Environment = z.object({
  TABLE_NAME: nonEmpty,
  STATE_MACHINE_ARN: optionalText,
  RETENTION_DAYS: int(30),
  STEPWISE_MODEL: nonEmpty.default("gpt-4o-mini"),
  OPENAI_BASE_URL: optionalUrl,
  OPENAI_API_KEY: optionalText,
  OPENAI_API_KEY_SECRET_ARN: optionalText,
  MODERATION_BASE_URL: optionalUrl,
  MODERATION_API_KEY: optionalText,
  MODERATION_API_KEY_SECRET_ARN: optionalText,
  MODERATION_MODEL: nonEmpty.max(128).optional(),
  STEPWISE_ROLE_SETTINGS: RoleSettingsInput.optional(),
  STEPWISE_FALLBACK_MODEL: optionalNonEmpty,
  STEPWISE_MAX_TOKENS_FIELD: z.enum(["auto", "max_tokens", "max_completion_tokens"]).default("auto"),
  STEPWISE_SESSION_TITLES: on,
  LLM_TIMEOUT_MS: int(120_000),
  LLM_MAX_RETRIES: atLeastZero.default(2),
  CONSOLE_LINKS: off,
  STREAM_URL: optionalText,
  API_URL: optionalText,
  STREAM_POLL_MS: int(250),
  STREAM_MAX_SECONDS: int(60),
  STREAM_HEARTBEAT_MS: int(10_000),
  MAX_INPUT_BYTES: positive.max(MAX_INPUT_BYTES_CEILING).default(DEFAULT_MAX_INPUT_BYTES),
  MAX_INPUT_CHARS: z.never({ error: "MAX_INPUT_CHARS is now MAX_INPUT_BYTES: a run's input is counted in UTF-8 bytes" }).optional(),
  STREAM_TOKEN_SECONDS: int(300),
  CORS_ALLOWED_ORIGINS: text.default(""),
  CONSOLE_ORIGIN: optionalText,
  CONSOLE_ASSETS_DIR: optionalText,
  MODEL_PRICES: z
    .string()
    .default(JSON.stringify(DEFAULT_MODEL_PRICES))
    .transform((text, ctx) => {
      try {
        return Prices.parse(JSON.parse(text));
      } catch {
        ctx.addIssue({
          code: "custom",
          message: 'MODEL_PRICES must be JSON like {"gpt-4o-mini": [0.15, 0.6]} (USD per million prompt and completion tokens)',
        });
        return z.NEVER;
      }
    }),
  MODEL_PRICE_INPUT_PER_MTOK: optionalPrice,
  MODEL_PRICE_OUTPUT_PER_MTOK: optionalPrice,
  MAX_PLAN_ITERATIONS: positive.max(20).default(10),
  HISTORY_EVENT_BUDGET: wholeNumber.min(MIN_HISTORY_EVENT_BUDGET).max(HISTORY_EVENT_LIMIT).default(HISTORY_EVENT_LIMIT),
  MAX_AGENT_ROUNDS: positive.max(50).default(30),
  TOOL_CONCURRENCY: int(2),
  CONTEXT_BUDGET_TOKENS: int(100_000),
  STEPWISE_FUNCTION_CALL_MODE: z.enum(["native", "json"]).default("native"),
  AWS_REGION: text.default("us-east-1"),
  AWS_ENDPOINT_URL_S3: optionalText,
  NOTIFY_QUEUE_URL: optionalText,
  DEAD_LETTER_QUEUE_URL: optionalText,
  WEBHOOK_ALLOW_LOOPBACK: off,
  WEBHOOK_ALLOW_HTTP: off,
  WEBHOOK_RETRY_SCHEDULE: z.enum(["default", "fast"]).default("default"),
  WEBHOOK_TIMEOUT_MS: int(10_000),
  WEBHOOK_SECRET_OVERLAP_HOURS: int(24),
  TOOL_SOURCES_KMS_KEY_ID: optionalText,
  TOOL_SOURCE_ALLOW_LOOPBACK: off,
  TOOL_SOURCE_ALLOW_HTTP: off,
  MCP_CALL_TIMEOUT_MS: int(60_000),
  MCP_CONNECT_TIMEOUT_MS: int(10_000),
  TOOL_CATALOG_CACHE_MS: atLeastZero.max(5_000).default(5_000),
  MAX_ACTIVE_RUNS_PER_TENANT: int(20),
  // One item holds a tenant's leases: a thousand stay far below DynamoDB's 400 KB.
  MAX_OPEN_STREAMS_PER_TENANT: positive.max(1_000).default(20),
  FILES_BUCKET: nonEmpty.default("stepwise-files"),
  MAX_UPLOAD_BYTES: int(5 * 1024 * 1024 * 1024),
  DOWNLOAD_LINK_SECONDS: positive.max(3_600).default(300),
  IMAGE_MAX_BYTES: int(5 * 1024 * 1024),
  IMAGE_REQUEST_MAX_BYTES: int(20 * 1024 * 1024),
  SANDBOX_FUNCTION_NAME: nonEmpty.default("stepwise-sandbox"),
  SANDBOX_TIMEOUT_MS: int(30_000),
  SANDBOX_MEMORY_MB: wholeNumber.min(64).max(MAX_SANDBOX_MEMORY_MB).default(512),
  SANDBOX_RUNTIME: z.enum(["pyodide", "agentcore"]).default("pyodide"),
  MAX_SANDBOXES_PER_TENANT: wholeNumber.min(1).max(MAX_SANDBOXES_CEILING).default(4),
  CODE_INTERPRETER_ID: optionalNonEmpty,
  /** How long a task's interpreter session may live at most (AgentCore stops it then; at most 8 hours). */
  CODE_INTERPRETER_SESSION_SECONDS: wholeNumber.min(60).max(28_800).default(3_600),
  WEB_FETCH_TIMEOUT_MS: int(15_000),
  WEB_FETCH_MAX_BYTES: int(2 * 1024 * 1024),
  WEB_FETCH_MAX_REDIRECTS: atLeastZero.max(10).default(5),
  WEB_FETCH_ALLOW_LOOPBACK: off,
  WEB_FETCH_ALLOW_HTTP: on,
  WEB_SEARCH_PROVIDER: z.enum(["none", "searxng", "files", "tavily", "brave"]).default("none"),
  SEARXNG_URL: optionalUrl,
  /** The search APIs' keys: as they are (locally), or the Secrets Manager secrets holding them (deployed; these win when both are set). */
  TAVILY_API_KEY: optionalNonEmpty,
  BRAVE_API_KEY: optionalNonEmpty,
  TAVILY_API_KEY_SECRET_ARN: optionalNonEmpty,
  BRAVE_API_KEY_SECRET_ARN: optionalNonEmpty,
  /** The search APIs' addresses (their public ones unless set: a proxy, or a test server). */
  TAVILY_URL: url.default("https://api.tavily.com"),
  BRAVE_URL: url.default("https://api.search.brave.com"),
  /** Set by Lambda where active tracing runs the X-Ray daemon; elsewhere, a daemon (or a collector's X-Ray receiver) of your own. */
  AWS_XRAY_DAEMON_ADDRESS: text
    .regex(/^(?:[^\s:]+:\d{1,5}|(?:tcp|udp):[^\s:]+:\d{1,5} (?:tcp|udp):[^\s:]+:\d{1,5})$/, {
      error: "AWS_XRAY_DAEMON_ADDRESS is host:port, or tcp:host:port udp:host:port",
    })
    .optional(),
});
type Environment = z.infer<typeof Environment>;

/** The deployment's settings from its environment variables (docs/configuration.md, "Configuration"); throws what is wrong with them. */
export function settingsFromEnv(env: Record<string, string | undefined> = process.env): Settings {
  const parsed = Environment.safeParse(env);
  if (!parsed.success) {
    throw new Error(`Invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  const e = parsed.data;
  if ((e.MODERATION_API_KEY || e.MODERATION_API_KEY_SECRET_ARN) && !e.MODERATION_BASE_URL) {
    // The model's own endpoint is asked with the model's key: a second key is for a second endpoint.
    throw new Error("Invalid configuration: MODERATION_API_KEY(_SECRET_ARN) is the key of MODERATION_BASE_URL: set that too");
  }
  const moderation = {
    ...(e.MODERATION_BASE_URL ? { baseUrl: e.MODERATION_BASE_URL } : {}),
    ...(e.MODERATION_API_KEY ? { apiKey: e.MODERATION_API_KEY } : {}),
    ...(e.MODERATION_API_KEY_SECRET_ARN ? { apiKeySecretArn: e.MODERATION_API_KEY_SECRET_ARN } : {}),
    ...(e.MODERATION_MODEL ? { model: e.MODERATION_MODEL } : {}),
  };
  return {
    region: e.AWS_REGION,
    tableName: e.TABLE_NAME,
    stateMachineArn: e.STATE_MACHINE_ARN,
    retentionDays: e.RETENTION_DAYS,
    model: {
      name: e.STEPWISE_MODEL,
      baseUrl: e.OPENAI_BASE_URL,
      apiKey: e.OPENAI_API_KEY,
      apiKeySecretArn: e.OPENAI_API_KEY_SECRET_ARN,
      roles: e.STEPWISE_ROLE_SETTINGS,
      fallback: e.STEPWISE_FALLBACK_MODEL,
      maxTokensField: e.STEPWISE_MAX_TOKENS_FIELD,
      timeoutMs: e.LLM_TIMEOUT_MS,
      maxRetries: e.LLM_MAX_RETRIES,
      functionCallMode: e.STEPWISE_FUNCTION_CALL_MODE,
      sessionTitles: e.STEPWISE_SESSION_TITLES,
      ...(Object.keys(moderation).length ? { moderation } : {}),
    },
    prices: { table: e.MODEL_PRICES, inputPerMTok: e.MODEL_PRICE_INPUT_PER_MTOK, outputPerMTok: e.MODEL_PRICE_OUTPUT_PER_MTOK },
    budgets: {
      maxPlanIterations: e.MAX_PLAN_ITERATIONS,
      maxAgentRounds: e.MAX_AGENT_ROUNDS,
      toolConcurrency: e.TOOL_CONCURRENCY,
      contextTokens: e.CONTEXT_BUDGET_TOKENS,
      historyEvents: e.HISTORY_EVENT_BUDGET,
    },
    limits: {
      maxInputBytes: e.MAX_INPUT_BYTES,
      maxActiveRunsPerTenant: e.MAX_ACTIVE_RUNS_PER_TENANT,
      maxOpenStreamsPerTenant: e.MAX_OPEN_STREAMS_PER_TENANT,
    },
    links: { api: e.API_URL, stream: e.STREAM_URL, stepFunctionsConsole: e.CONSOLE_LINKS },
    stream: {
      pollMs: e.STREAM_POLL_MS,
      maxSeconds: e.STREAM_MAX_SECONDS,
      heartbeatMs: e.STREAM_HEARTBEAT_MS,
      tokenSeconds: e.STREAM_TOKEN_SECONDS,
    },
    cors: { allowedOrigins: e.CORS_ALLOWED_ORIGINS, consoleOrigin: e.CONSOLE_ORIGIN },
    consoleAssetsDir: e.CONSOLE_ASSETS_DIR,
    webhooks: {
      queueUrl: e.NOTIFY_QUEUE_URL,
      deadLetterQueueUrl: e.DEAD_LETTER_QUEUE_URL,
      policy: { allowLoopback: e.WEBHOOK_ALLOW_LOOPBACK, allowHttp: e.WEBHOOK_ALLOW_HTTP },
      retrySchedule: e.WEBHOOK_RETRY_SCHEDULE,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      secretOverlapHours: e.WEBHOOK_SECRET_OVERLAP_HOURS,
    },
    toolSources: {
      kmsKeyId: e.TOOL_SOURCES_KMS_KEY_ID,
      policy: { allowLoopback: e.TOOL_SOURCE_ALLOW_LOOPBACK, allowHttp: e.TOOL_SOURCE_ALLOW_HTTP },
      callTimeoutMs: e.MCP_CALL_TIMEOUT_MS,
      connectTimeoutMs: e.MCP_CONNECT_TIMEOUT_MS,
      catalogCacheMs: e.TOOL_CATALOG_CACHE_MS,
    },
    files: {
      bucket: e.FILES_BUCKET,
      s3Endpoint: e.AWS_ENDPOINT_URL_S3,
      maxUploadBytes: e.MAX_UPLOAD_BYTES,
      downloadLinkSeconds: e.DOWNLOAD_LINK_SECONDS,
      imageMaxBytes: e.IMAGE_MAX_BYTES,
      imageRequestMaxBytes: e.IMAGE_REQUEST_MAX_BYTES,
    },
    sandbox: sandboxOf(e),
    webFetch: {
      timeoutMs: e.WEB_FETCH_TIMEOUT_MS,
      maxBytes: e.WEB_FETCH_MAX_BYTES,
      maxRedirects: e.WEB_FETCH_MAX_REDIRECTS,
      allowLoopback: e.WEB_FETCH_ALLOW_LOOPBACK,
      allowHttp: e.WEB_FETCH_ALLOW_HTTP,
    },
    webSearch: webSearchOf(e),
    ...(e.AWS_XRAY_DAEMON_ADDRESS ? { traces: { xrayDaemonAddress: e.AWS_XRAY_DAEMON_ADDRESS } } : {}),
  };
}

/** run_code's runtime with what it needs, or an error naming the variable that is missing. */
function sandboxOf(e: Environment): SandboxSettings {
  const limits = {
    functionName: e.SANDBOX_FUNCTION_NAME,
    timeoutMs: e.SANDBOX_TIMEOUT_MS,
    memoryMb: e.SANDBOX_MEMORY_MB,
    maxPerTenant: e.MAX_SANDBOXES_PER_TENANT,
  };
  if (e.SANDBOX_RUNTIME === "pyodide") return { ...limits, runtime: "pyodide" };
  if (!e.CODE_INTERPRETER_ID)
    throw new Error("SANDBOX_RUNTIME=agentcore needs CODE_INTERPRETER_ID (the AgentCore Code Interpreter's id; the stack sets it)");
  return { ...limits, runtime: "agentcore", codeInterpreterId: e.CODE_INTERPRETER_ID, sessionSeconds: e.CODE_INTERPRETER_SESSION_SECONDS };
}

/** The search provider with what it needs, or an error naming the variable that is missing. */
function webSearchOf(e: Environment): WebSearchSettings {
  const provider = e.WEB_SEARCH_PROVIDER;
  if (provider === "none" || provider === "files") return { provider };
  if (provider === "searxng") {
    if (!e.SEARXNG_URL) throw new Error("WEB_SEARCH_PROVIDER=searxng needs SEARXNG_URL");
    return { provider, url: e.SEARXNG_URL };
  }
  const [secretArn, value, url] =
    provider === "tavily"
      ? [e.TAVILY_API_KEY_SECRET_ARN, e.TAVILY_API_KEY, e.TAVILY_URL]
      : [e.BRAVE_API_KEY_SECRET_ARN, e.BRAVE_API_KEY, e.BRAVE_URL];
  const api = provider.toUpperCase();
  if (secretArn) return { provider, url, key: { secretArn } };
  if (value) return { provider, url, key: { value } };
  throw new Error(
    `WEB_SEARCH_PROVIDER=${provider} needs ${api}_API_KEY (or ${api}_API_KEY_SECRET_ARN, a Secrets Manager secret holding it)`,
  );
}

/** Every default, for a deployment whose table is `tableName` (tests, and tools that need no environment). */
export function defaultSettings(tableName: string): Settings {
  return settingsFromEnv({ TABLE_NAME: tableName });
}

/** The model and the prices: what a cost estimate needs of the settings. */
export type PriceSettings = Pick<Settings, "model" | "prices">;

/**
 * The model's price in USD per million prompt / completion tokens: the two price settings when
 * given, else its line in the price table; undefined for a model with no price.
 */
export function modelPrice({ model, prices }: PriceSettings): { input: number; output: number } | undefined {
  if (prices.inputPerMTok !== undefined || prices.outputPerMTok !== undefined) {
    return { input: prices.inputPerMTok ?? 0, output: prices.outputPerMTok ?? 0 };
  }
  const price = prices.table[model.name];
  return price && { input: price[0], output: price[1] };
}
