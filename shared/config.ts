import { z } from "zod";
import { RoleSettingsInput } from "./llm/roleSettings.js";
import { HISTORY_EVENT_LIMIT, MIN_HISTORY_EVENT_BUDGET } from "./run/historyBudget.js";

const int = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const PriceTable = z.record(z.string().min(1), z.tuple([z.number().min(0), z.number().min(0)]));
/** OpenAI's list prices (USD per million prompt / completion tokens) when this table was written. */
export const DEFAULT_MODEL_PRICES: z.infer<typeof PriceTable> = {
  "gpt-4o-mini": [0.15, 0.6],
  "gpt-4o": [2.5, 10],
  "gpt-4.1": [2, 8],
  "gpt-4.1-mini": [0.4, 1.6],
  "gpt-4.1-nano": [0.1, 0.4],
  "o4-mini": [1.1, 4.4],
};

/** Configuration from the environment, validated once. Endpoints for the AWS SDK clients come from
 * the SDK's own variables (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SFN), so no code here knows
 * where it runs. */
export const Config = z.object({
  TABLE_NAME: z.string().min(1),
  STATE_MACHINE_ARN: z.string().optional(),
  RETENTION_DAYS: int(30),
  STEPWISE_MODEL: z.string().min(1).default("gpt-4o-mini"),
  OPENAI_BASE_URL: z.string().url().optional(),
  OPENAI_API_KEY: z.string().optional(),
  /** On AWS the key lives in Secrets Manager (never in the template or the function's settings). */
  OPENAI_API_KEY_SECRET_ARN: z.string().optional(),
  /** Per-role generation settings, JSON: {"summarizer": {"temperature": 0.01}, "planner": {"model": "o4-mini", "reasoningEffort": "low"}}. */
  STEPWISE_ROLE_SETTINGS: RoleSettingsInput.optional(),
  /** A second model (same endpoint and key) that answers when the first stays unavailable after its retries. */
  STEPWISE_FALLBACK_MODEL: z.string().min(1).optional(),
  /** The output limit's field: OpenAI and Azure take max_completion_tokens (o-series reject max_tokens), most compatible servers max_tokens. */
  STEPWISE_MAX_TOKENS_FIELD: z.enum(["auto", "max_tokens", "max_completion_tokens"]).default("auto"),
  LLM_TIMEOUT_MS: int(120_000),
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).default(2),
  /** Link runs to the Step Functions console (on AWS). */
  CONSOLE_LINKS: z.stringbool().default(false),
  STREAM_URL: z.string().optional(),
  /** The API's base URL, for links made where another URL took the request (the stream function's /mcp). */
  API_URL: z.string().optional(),
  STREAM_POLL_MS: int(250),
  /** How long one stream connection lasts: a streamed Lambda is not told when its client leaves (README, "Operating"). */
  STREAM_MAX_SECONDS: int(60),
  STREAM_HEARTBEAT_MS: int(10_000),
  MAX_INPUT_CHARS: int(32_000),
  /** How long a browser's stream token (`POST /v1/runs/{id}/stream-token`) stays valid. */
  STREAM_TOKEN_SECONDS: int(300),
  /** Origins allowed to call the API and the stream from a browser (comma-separated; "*" for any). The console is same-origin and needs none. */
  CORS_ALLOWED_ORIGINS: z.string().default(""),
  /** The console's own origin, allowed too where the stream is on another origin (on AWS: the HTTP API's; set by the stack). */
  CONSOLE_ORIGIN: z.string().optional(),
  /** Where the built console is (index.html and its assets); unset: no console. */
  CONSOLE_ASSETS_DIR: z.string().optional(),
  /**
   * Estimated cost: the price table, model → [USD per million prompt tokens, per million completion
   * tokens] as JSON (OpenAI's list prices by default); a model not in it gets no estimate. The two
   * single prices, when set, price STEPWISE_MODEL whatever the table says.
   */
  MODEL_PRICES: z
    .string()
    .default(JSON.stringify(DEFAULT_MODEL_PRICES))
    .transform((text, ctx) => {
      try {
        return PriceTable.parse(JSON.parse(text));
      } catch {
        ctx.addIssue({
          code: "custom",
          message: 'MODEL_PRICES must be JSON like {"gpt-4o-mini": [0.15, 0.6]} (USD per million prompt and completion tokens)',
        });
        return z.NEVER;
      }
    }),
  MODEL_PRICE_INPUT_PER_MTOK: z.coerce.number().min(0).optional(),
  MODEL_PRICE_OUTPUT_PER_MTOK: z.coerce.number().min(0).optional(),
  /** Budgets, defaults from the seeds. */
  MAX_PLAN_ITERATIONS: z.coerce.number().int().positive().max(20).default(10),
  /**
   * History events one execution may use (Step Functions stops at 25,000): before a plan step, an
   * executor's hand-back or a ReAct turn would pass it, the run continues in a new execution
   * (shared/run/historyBudget.ts).
   */
  HISTORY_EVENT_BUDGET: z.coerce.number().int().min(MIN_HISTORY_EVENT_BUDGET).max(HISTORY_EVENT_LIMIT).default(HISTORY_EVENT_LIMIT),
  MAX_AGENT_ROUNDS: z.coerce.number().int().positive().max(50).default(30),
  TOOL_CONCURRENCY: int(2),
  /** Tokens a prompt may use; older turns are cut to fit (whole turns, newest kept). */
  CONTEXT_BUDGET_TOKENS: int(100_000),
  /** How the model calls tools: natively, or by the JSON contract in the prompt. */
  STEPWISE_FUNCTION_CALL_MODE: z.enum(["native", "json"]).default("native"),
  AWS_REGION: z.string().default("us-east-1"),
  /** Webhooks: the notification queue, its dead letters, and who may be called. */
  NOTIFY_QUEUE_URL: z.string().optional(),
  DEAD_LETTER_QUEUE_URL: z.string().optional(),
  WEBHOOK_ALLOW_LOOPBACK: z.stringbool().default(false),
  WEBHOOK_ALLOW_HTTP: z.stringbool().default(false),
  WEBHOOK_RETRY_SCHEDULE: z.enum(["default", "fast"]).default("default"),
  WEBHOOK_TIMEOUT_MS: int(10_000),
  WEBHOOK_SECRET_OVERLAP_HOURS: int(24),
  /** MCP tool sources: the KMS key that seals their header values, who may be called, how long. */
  TOOL_SOURCES_KMS_KEY_ID: z.string().optional(),
  TOOL_SOURCE_ALLOW_LOOPBACK: z.stringbool().default(false),
  TOOL_SOURCE_ALLOW_HTTP: z.stringbool().default(false),
  MCP_CALL_TIMEOUT_MS: int(60_000),
  MCP_CONNECT_TIMEOUT_MS: int(10_000),
  /** How long a warm container reuses a tenant's tool list (at most 5 s, so changes show quickly). */
  TOOL_CATALOG_CACHE_MS: z.coerce.number().int().min(0).max(5_000).default(5_000),
  /** Backpressure: runs a tenant may have going at once. */
  MAX_ACTIVE_RUNS_PER_TENANT: int(20),
  /** Files: the bucket that holds their bytes, the upload size limit, how long a download link works. */
  FILES_BUCKET: z.string().min(1).default("stepwise-files"),
  MAX_UPLOAD_BYTES: int(5 * 1024 * 1024 * 1024),
  DOWNLOAD_LINK_SECONDS: z.coerce.number().int().positive().max(3_600).default(300),
  /** The code sandbox: its function, and the limits of one run_code call. */
  SANDBOX_FUNCTION_NAME: z.string().min(1).default("stepwise-sandbox"),
  SANDBOX_TIMEOUT_MS: int(30_000),
  SANDBOX_MEMORY_MB: int(512),
  /** web_fetch: limits, and (as for webhooks) whether loopback and plain http may be fetched. */
  WEB_FETCH_TIMEOUT_MS: int(15_000),
  WEB_FETCH_MAX_BYTES: int(2 * 1024 * 1024),
  WEB_FETCH_MAX_REDIRECTS: z.coerce.number().int().min(0).max(10).default(5),
  WEB_FETCH_ALLOW_LOOPBACK: z.stringbool().default(false),
  WEB_FETCH_ALLOW_HTTP: z.stringbool().default(true),
  /** web_search and deep_search: which provider (none: the tools are not offered), SearXNG's address. */
  WEB_SEARCH_PROVIDER: z.enum(["none", "searxng", "files", "tavily", "brave"]).default("none"),
  SEARXNG_URL: z.string().url().optional(),
  /** The search APIs' keys: as they are (locally), or the Secrets Manager secrets holding them (deployed; these win when both are set). */
  TAVILY_API_KEY: z.string().min(1).optional(),
  BRAVE_API_KEY: z.string().min(1).optional(),
  TAVILY_API_KEY_SECRET_ARN: z.string().min(1).optional(),
  BRAVE_API_KEY_SECRET_ARN: z.string().min(1).optional(),
  /** The search APIs' addresses (their public ones unless set: a proxy, or a test server). */
  TAVILY_URL: z.string().url().default("https://api.tavily.com"),
  BRAVE_URL: z.string().url().default("https://api.search.brave.com"),
});
export type Config = z.infer<typeof Config>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = Config.safeParse(env);
  if (!parsed.success) {
    throw new Error(`Invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  return parsed.data;
}
