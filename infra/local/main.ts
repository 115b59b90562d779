import path from "node:path";
import { localApiKey } from "./localApiKey.js";
import { startLocalStack } from "./stack.js";
import { executionLine, readableOutput } from "./terminalLog.js";

/**
 * `npm start`: Stepwise on this machine, no AWS account and no API key needed.
 * PORT (default 3000), STEPWISE_API_KEY (default: the data folder's key, made at its first start;
 * a new one in memory), STEPWISE_DATA_DIR (default
 * .stepwise/data; "memory" keeps nothing), STEPWISE_API_KEYS ("tenant=key,…" for more tenants),
 * INTERRUPT_TIMEOUT_SECONDS (default 24 h), MAX_CONCURRENCY (executors at once, default 8),
 * STEPWISE_LOCAL_CONTAINERS (run the step functions in this many processes, invoked in turn, as
 * separate Lambda containers; default 0: in this process), STEPWISE_LOCAL_API_CONTAINERS (the same
 * for the API's requests), STEPWISE_LOCAL_MCP ("api": /mcp is answered by the API function, buffered,
 * as at the HTTP API's URL on AWS; default "stream": by the stream function, as at the stream URL),
 * STEPWISE_LOCAL_API_TIMEOUT_SECONDS (the API function's time limit, default as deployed: 29; a
 * buffered `/mcp` call answers within it),
 * STEPWISE_LOG_FORMAT ("json": the handlers' JSON log lines and EMF metrics, as on AWS; by default
 * one readable line per request, log line and run start or end).
 */
const dataSetting = process.env.STEPWISE_DATA_DIR ?? path.join(".stepwise", "data");
const dataDir = dataSetting === "memory" ? undefined : dataSetting;
const { key: apiKey } = localApiKey(process.env.STEPWISE_API_KEY, dataDir);
const apiKeys: Record<string, string> = { [apiKey]: "local" };
for (const pair of (process.env.STEPWISE_API_KEYS ?? "").split(",").filter(Boolean)) {
  const [tenant, key] = pair.split("=");
  if (!tenant || !key) throw new Error(`STEPWISE_API_KEYS entries are tenant=key, got '${pair}'`);
  apiKeys[key] = tenant;
}

function localContainers(name: string): number {
  const setting = process.env[name];
  const count = Number(setting || 0);
  if (!Number.isInteger(count) || count < 0 || count > 64) throw new Error(`${name} is a whole number from 0 to 64, got '${setting}'`);
  return count;
}

function mcpRoute(setting: string | undefined): "stream" | "api" {
  if (!setting || setting === "stream" || setting === "api") return setting === "api" ? "api" : "stream";
  throw new Error(`STEPWISE_LOCAL_MCP is "stream" or "api", got '${setting}'`);
}

// Variables set but empty mean "unset" (tests clear the caller's OpenAI settings this way).
for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) if (process.env[name] === "") delete process.env[name];

const jsonLogs = process.env.STEPWISE_LOG_FORMAT === "json";
if (!jsonLogs) for (const stream of [process.stdout, process.stderr]) readableOutput(stream);

// Start-up says what it is doing; the JSON ready line (scripts, tests) stays the only JSON on stdout.
const say = (text: string) => (process.env.STEPWISE_READY_JSON ? console.error(text) : console.log(text));
const startedAt = performance.now();
say(`Starting Stepwise (data: ${dataDir ?? "in memory"})…`);
const port = Number(process.env.PORT ?? 3000);
const stack = await startLocalStack({
  port,
  dataDir,
  progress: (part, ms) => say(`  ${part.padEnd(36)} ${(ms / 1000).toFixed(1)} s`),
  onExecution: jsonLogs ? undefined : (change) => console.log(executionLine(change)),
  apiKeys,
  modelLatencyMs: process.env.OFFLINE_MODEL_LATENCY_MS ? Number(process.env.OFFLINE_MODEL_LATENCY_MS) : undefined,
  containers: localContainers("STEPWISE_LOCAL_CONTAINERS"),
  apiContainers: localContainers("STEPWISE_LOCAL_API_CONTAINERS"),
  mcpRoute: mcpRoute(process.env.STEPWISE_LOCAL_MCP),
  stateMachine: {
    interruptTimeoutSeconds: process.env.INTERRUPT_TIMEOUT_SECONDS ? Number(process.env.INTERRUPT_TIMEOUT_SECONDS) : undefined,
    maxConcurrency: process.env.MAX_CONCURRENCY ? Number(process.env.MAX_CONCURRENCY) : undefined,
  },
}).catch((error: NodeJS.ErrnoException) => {
  // A port in use is the one start-up failure a person fixes by a setting: say which, no stack trace.
  if (error.code !== "EADDRINUSE") throw error;
  console.error(
    `Port ${port} is already in use (another Stepwise?). Stop that program, or choose another port: PORT=${port + 1} npm start`,
  );
  process.exit(1);
});

const { continued, started } = stack.recovered;
if (continued.length + started.length > 0) {
  say(`  resumed ${continued.length + started.length} run(s) that were in flight when Stepwise last stopped`);
}
say(`  ready in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);

if (process.env.STEPWISE_READY_JSON) {
  // Machine-readable line for scripts and tests that start the stack.
  console.log(
    JSON.stringify({
      ready: true,
      url: stack.url,
      apiKey,
      endpoints: stack.endpoints,
      containerPids: stack.containerPids,
      apiContainerPids: stack.apiContainerPids,
    }),
  );
} else {
  const model = stack.model.offline
    ? "the offline model (deterministic; demonstrates the orchestration, does not reason)"
    : `${stack.model.name} at ${stack.model.url}${await modelCheck(stack.model.url)}`;
  const cliUrl = stack.url === "http://127.0.0.1:3000" ? "" : `STEPWISE_URL=${stack.url} `;
  console.log(`Stepwise is running at ${stack.url}
  console:  ${stack.url}/   (sign in with the API key)
  API key:  ${apiKey}
  model:    ${model}
  data:     ${dataDir ?? "in memory (nothing is kept)"}

Try it:
  in a browser:  ${stack.url}/
  the CLI:       ${cliUrl}STEPWISE_API_KEY=${apiKey} npx stepwise run "Compute 17*23 and (120/8)+2^5, then write a short report"
                 (npx stepwise works in this folder; run \`npm link\` here once for \`stepwise\` anywhere)
  curl:          curl -s -X POST ${stack.url}/v1/runs -H "Authorization: Bearer ${apiKey}" -H "Content-Type: application/json" \\
                   -d '{"input": "Compute 17*23 and (120/8)+2^5, then write a short report", "mode": "plan_solve"}'
                 curl -N ${stack.url}/v1/runs/<runId>/stream -H "Authorization: Bearer ${apiKey}"
Ctrl-C stops it.${jsonLogs ? "" : " Requests and runs are logged below, a line each (STEPWISE_LOG_FORMAT=json for the JSON logs)."}
`);
}

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    say("\nStopping Stepwise…");
    await stack.close();
    say(`Stopped.${dataDir ? ` Runs and files are kept in ${dataDir}; unfinished runs resume at the next start.` : ""}`);
    process.exit(0);
  });
}

/**
 * Whether the configured model endpoint answers at all, asked once at start so a wrong URL shows
 * here rather than as a run failing minutes later. Any HTTP answer means it is reachable.
 */
async function modelCheck(url: string): Promise<string> {
  try {
    const response = await fetch(`${url.replace(/\/$/, "")}/models`, {
      headers: process.env.OPENAI_API_KEY ? { authorization: `Bearer ${process.env.OPENAI_API_KEY}` } : {},
      signal: AbortSignal.timeout(5_000),
    });
    await response.body?.cancel();
    return response.status === 401 || response.status === 403
      ? ` — WARNING: it refused the key (HTTP ${response.status}); runs will fail until OPENAI_API_KEY is right`
      : "";
  } catch (error) {
    const { cause } = error as { cause?: { code?: string; message?: string } };
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    return ` — WARNING: not reachable (${reason}); runs will fail until it is (check OPENAI_BASE_URL)`;
  }
}
