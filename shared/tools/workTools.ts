import { LambdaClient } from "@aws-sdk/client-lambda";
import type { Config } from "../config.js";
import { LambdaSandbox } from "../sandbox/lambdaSandbox.js";
import type { FetchLimits } from "../web/fetchPage.js";
import { RunFilesProvider, SearxngProvider, type SearchProvider } from "../web/search.js";
import { runCodeTool } from "./runCode.js";
import type { Tool } from "./tool.js";
import { deepSearchTool, webFetchTool, webSearchTool } from "./web.js";
import { writeReport } from "./writeReport.js";
import { builtinTools } from "./builtins.js";
import { askUser } from "./askUser.js";

/** The tools that do real work beyond the table: the code interpreter, web research, reports. */
export function workTools(config: Config): Tool[] {
  const sandbox = new LambdaSandbox(new LambdaClient({ region: config.AWS_REGION }), config.SANDBOX_FUNCTION_NAME);
  const limits = fetchLimits(config);
  const search = searchProvider(config, limits);
  return [
    runCodeTool(sandbox, { timeoutMs: config.SANDBOX_TIMEOUT_MS, memoryMb: config.SANDBOX_MEMORY_MB, maxOutputChars: 20_000 }),
    webFetchTool(limits),
    ...(search ? [webSearchTool(search), deepSearchTool(search)] : []),
    writeReport,
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
  return undefined;
}
