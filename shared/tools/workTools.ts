import type { BedrockAgentCoreClient } from "@aws-sdk/client-bedrock-agentcore";
import type { LambdaClient } from "@aws-sdk/client-lambda";
import type { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { CodeSandbox } from "../ports/sandbox.js";
import type { Tool } from "../ports/tools.js";
import { AgentCoreInterpreter } from "../sandbox/agentCoreInterpreter.js";
import { LambdaSandbox } from "../sandbox/lambdaSandbox.js";
import { type ApiKeySource, fixedKey, SecretKey } from "../secrets/secretKey.js";
import { AGENTCORE_LIBRARIES, type SandboxSettings, type SearchKey, type Settings, type WebSearchSettings } from "../settings.js";
import type { FetchLimits } from "../web/fetchPage.js";
import { BraveProvider, RunFilesProvider, type SearchProvider, SearxngProvider, TavilyProvider } from "../web/search.js";
import { askUser } from "./askUser.js";
import { builtinTools } from "./builtins.js";
import { chartTool } from "./chart.js";
import { runCodeTool } from "./runCode.js";
import { deepSearchTool, webFetchTool, webSearchTool } from "./web.js";
import { writeReport } from "./writeReport.js";

/** What the work tools are configured by. */
export type WorkToolSettings = Pick<Settings, "sandbox" | "webFetch" | "webSearch">;

/** The clients the work tools call: the sandbox function or code interpreter, and the secrets holding the search APIs' keys. */
export interface WorkToolClients {
  lambda: LambdaClient;
  agentCore: BedrockAgentCoreClient;
  secretsManager: SecretsManagerClient;
}

/** The tools that do real work beyond the table: the code interpreter, web research, reports, charts. */
export function workTools(settings: WorkToolSettings, clients: WorkToolClients): Tool[] {
  const { sandbox, webFetch } = settings;
  const search = searchProvider(settings.webSearch, webFetch, clients.secretsManager);
  return [
    runCodeTool(codeSandbox(sandbox, clients), {
      timeoutMs: sandbox.timeoutMs,
      memoryMb: sandbox.memoryMb,
      maxOutputChars: 20_000,
      libraries: sandbox.runtime === "agentcore" ? AGENTCORE_LIBRARIES : [],
    }),
    webFetchTool(webFetch),
    ...(search ? [webSearchTool(search), deepSearchTool(search)] : []),
    writeReport,
    chartTool,
  ];
}

/**
 * Every tool Stepwise itself may give an agent of this deployment (a tenant's MCP tools call out
 * over HTTP and need no grant): the stack grants what these declare.
 */
export function stepwiseTools(settings: WorkToolSettings, clients: WorkToolClients): Tool[] {
  return [...builtinTools, askUser, ...workTools(settings, clients)];
}

/** run_code's runtime: the code interpreter's sessions, or the sandbox function. */
function codeSandbox(sandbox: SandboxSettings, clients: WorkToolClients): CodeSandbox {
  return sandbox.runtime === "agentcore"
    ? new AgentCoreInterpreter(clients.agentCore, sandbox.codeInterpreterId, { sessionSeconds: sandbox.sessionSeconds })
    : new LambdaSandbox(clients.lambda, sandbox.functionName);
}

/** The configured search provider; none configured means no search tools. */
function searchProvider(search: WebSearchSettings, limits: FetchLimits, secrets: SecretsManagerClient): SearchProvider | undefined {
  switch (search.provider) {
    case "none":
      return undefined;
    case "files":
      return new RunFilesProvider();
    case "searxng":
      return new SearxngProvider(search.url, limits);
    case "tavily":
      return new TavilyProvider(searchKey(search.key, secrets), limits, search.url);
    case "brave":
      return new BraveProvider(searchKey(search.key, secrets), limits, search.url);
  }
}

/** A search API's key: its Secrets Manager secret (read when a search needs it), or the key itself. */
function searchKey(key: SearchKey, secrets: SecretsManagerClient): ApiKeySource {
  return "secretArn" in key ? new SecretKey(secrets, key.secretArn) : fixedKey(key.value);
}
