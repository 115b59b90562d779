import type { BedrockAgentCoreClient } from "@aws-sdk/client-bedrock-agentcore";
import type { LambdaClient } from "@aws-sdk/client-lambda";
import type { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { ApiKeySource } from "../shared/ports/apiKeySource.js";
import type { CodeSandbox } from "../shared/ports/sandbox.js";
import type { Tool } from "../shared/ports/tools.js";
import { AgentCoreInterpreter } from "../shared/sandbox/agentCoreInterpreter.js";
import { LambdaSandbox } from "../shared/sandbox/lambdaSandbox.js";
import { SandboxBound, type SandboxBoundPorts } from "../shared/sandbox/sandboxBound.js";
import { fixedKey, SecretKey } from "../shared/secrets/secretKey.js";
import {
  AGENTCORE_LIBRARIES,
  type FetchLimits,
  type SandboxSettings,
  type SearchKey,
  type Settings,
  type WebSearchSettings,
} from "../shared/settings.js";
import { askUser } from "../shared/tools/askUser.js";
import { builtinTools } from "../shared/tools/builtins.js";
import { chartTool } from "../shared/tools/chart.js";
import { runCodeTool } from "../shared/tools/runCode.js";
import { deepSearchTool, webFetchTool, webSearchTool } from "../shared/tools/web.js";
import { writeReport } from "../shared/tools/writeReport.js";
import { BraveProvider, RunFilesProvider, type SearchProvider, SearxngProvider, TavilyProvider } from "../shared/web/search.js";

/** What the work tools are configured by. */
export type WorkToolSettings = Pick<Settings, "sandbox" | "webFetch" | "webSearch">;

/** The clients the work tools call: the sandbox function or code interpreter, and the secrets holding the search APIs' keys. */
export interface WorkToolClients {
  lambda: LambdaClient;
  agentCore: BedrockAgentCoreClient;
  secretsManager: SecretsManagerClient;
}

/**
 * A lease on a tenant's sandbox lasts this much longer than a call's time limit past its last
 * renewal (the call renews it while it runs): a holder that died may leave its sandbox running for
 * up to that limit, with the interpreter's start and the outputs' copy, and it counts till then.
 */
const SANDBOX_LEASE_MARGIN_MS = 120_000;

/**
 * The tools that do real work beyond the table: the code interpreter, web research, reports, charts.
 * With `leases`, run_code keeps to each tenant's bound on sandboxes running at once.
 */
export function workTools(settings: WorkToolSettings, clients: WorkToolClients, leases?: SandboxBoundPorts): Tool[] {
  const { sandbox, webFetch } = settings;
  const search = searchProvider(settings.webSearch, webFetch, clients.secretsManager);
  const bound =
    leases && new SandboxBound(leases, { maxPerTenant: sandbox.maxPerTenant, leaseMs: sandbox.timeoutMs + SANDBOX_LEASE_MARGIN_MS });
  return [
    runCodeTool(
      codeSandbox(sandbox, clients),
      {
        timeoutMs: sandbox.timeoutMs,
        memoryMb: sandbox.memoryMb,
        maxOutputChars: 20_000,
        libraries: sandbox.runtime === "agentcore" ? AGENTCORE_LIBRARIES : [],
      },
      bound,
    ),
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
