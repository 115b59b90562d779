import { LambdaClient } from "@aws-sdk/client-lambda";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { Config } from "../config.js";
import type { Tool } from "../ports/tools.js";
import { LambdaSandbox } from "../sandbox/lambdaSandbox.js";
import { type ApiKeySource, fixedKey, SecretKey } from "../secrets/secretKey.js";
import type { FetchLimits } from "../web/fetchPage.js";
import { BraveProvider, RunFilesProvider, type SearchProvider, SearxngProvider, TavilyProvider } from "../web/search.js";
import { askUser } from "./askUser.js";
import { builtinTools } from "./builtins.js";
import { chartTool } from "./chart.js";
import { runCodeTool } from "./runCode.js";
import { deepSearchTool, webFetchTool, webSearchTool } from "./web.js";
import { writeReport } from "./writeReport.js";

/** The tools that do real work beyond the table: the code interpreter, web research, reports, charts. */
export function workTools(config: Config): Tool[] {
  const sandbox = new LambdaSandbox(new LambdaClient({ region: config.AWS_REGION }), config.SANDBOX_FUNCTION_NAME);
  const limits = fetchLimits(config);
  const search = searchProvider(config, limits);
  return [
    runCodeTool(sandbox, { timeoutMs: config.SANDBOX_TIMEOUT_MS, memoryMb: config.SANDBOX_MEMORY_MB, maxOutputChars: 20_000 }),
    webFetchTool(limits),
    ...(search ? [webSearchTool(search), deepSearchTool(search)] : []),
    writeReport,
    chartTool,
  ];
}

/**
 * Every tool Stepwise itself may give an agent of this deployment (a tenant's MCP tools call out
 * over HTTP and need no grant): the stack grants what these declare.
 */
export function stepwiseTools(config: Config): Tool[] {
  return [...builtinTools, askUser, ...workTools(config)];
}

export function fetchLimits(config: Config): FetchLimits {
  return {
    timeoutMs: config.WEB_FETCH_TIMEOUT_MS,
    maxBytes: config.WEB_FETCH_MAX_BYTES,
    maxRedirects: config.WEB_FETCH_MAX_REDIRECTS,
    allowLoopback: config.WEB_FETCH_ALLOW_LOOPBACK,
    allowHttp: config.WEB_FETCH_ALLOW_HTTP,
  };
}

/** The configured search provider; none configured means no search tools. */
function searchProvider(config: Config, limits: FetchLimits): SearchProvider | undefined {
  if (config.WEB_SEARCH_PROVIDER === "files") return new RunFilesProvider();
  if (config.WEB_SEARCH_PROVIDER === "searxng") {
    if (!config.SEARXNG_URL) throw new Error("WEB_SEARCH_PROVIDER=searxng needs SEARXNG_URL");
    return new SearxngProvider(config.SEARXNG_URL, limits);
  }
  if (config.WEB_SEARCH_PROVIDER === "tavily") return new TavilyProvider(searchKey(config, "TAVILY"), limits, config.TAVILY_URL);
  if (config.WEB_SEARCH_PROVIDER === "brave") return new BraveProvider(searchKey(config, "BRAVE"), limits, config.BRAVE_URL);
  return undefined;
}

/** A search API's key: its Secrets Manager secret (read when a search needs it), or the key itself from the environment. */
function searchKey(config: Config, api: "TAVILY" | "BRAVE"): ApiKeySource {
  const secretArn = config[`${api}_API_KEY_SECRET_ARN`];
  if (secretArn) return new SecretKey(new SecretsManagerClient({ region: config.AWS_REGION }), secretArn);
  const key = config[`${api}_API_KEY`];
  if (key) return fixedKey(key);
  throw new Error(
    `WEB_SEARCH_PROVIDER=${api.toLowerCase()} needs ${api}_API_KEY (or ${api}_API_KEY_SECRET_ARN, a Secrets Manager secret holding it)`,
  );
}
