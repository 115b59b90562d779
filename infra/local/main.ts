import path from "node:path";
import { localApiKey } from "./localApiKey.js";
import { startLocalStack } from "./stack.js";

/**
 * `npm start`: Stepwise on this machine, no AWS account and no API key needed.
 * PORT (default 3000), STEPWISE_API_KEY (default: the data folder's key, made at its first start;
 * a new one in memory), STEPWISE_DATA_DIR (default
 * .stepwise/data; "memory" keeps nothing), STEPWISE_API_KEYS ("tenant=key,…" for more tenants),
 * INTERRUPT_TIMEOUT_SECONDS (default 24 h), MAX_CONCURRENCY (executors at once, default 8),
 * STEPWISE_LOCAL_CONTAINERS (run the step functions in this many processes, invoked in turn, as
 * separate Lambda containers; default 0: in this process).
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

function localContainers(setting: string | undefined): number {
  const count = Number(setting || 0);
  if (!Number.isInteger(count) || count < 0 || count > 64) throw new Error(`STEPWISE_LOCAL_CONTAINERS is a whole number from 0 to 64, got '${setting}'`);
  return count;
}

// Variables set but empty mean "unset" (tests clear the caller's OpenAI settings this way).
for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) if (process.env[name] === "") delete process.env[name];

// Start-up says what it is doing; the JSON ready line (scripts, tests) stays the only JSON on stdout.
const say = (text: string) => (process.env.STEPWISE_READY_JSON ? console.error(text) : console.log(text));
const startedAt = performance.now();
say(`Starting Stepwise (data: ${dataDir ?? "in memory"})…`);
const stack = await startLocalStack({
  port: Number(process.env.PORT ?? 3000),
  dataDir,
  progress: (part, ms) => say(`  ${part.padEnd(36)} ${(ms / 1000).toFixed(1)} s`),
  apiKeys,
  modelLatencyMs: process.env.OFFLINE_MODEL_LATENCY_MS ? Number(process.env.OFFLINE_MODEL_LATENCY_MS) : undefined,
  containers: localContainers(process.env.STEPWISE_LOCAL_CONTAINERS),
  stateMachine: {
    interruptTimeoutSeconds: process.env.INTERRUPT_TIMEOUT_SECONDS ? Number(process.env.INTERRUPT_TIMEOUT_SECONDS) : undefined,
    maxConcurrency: process.env.MAX_CONCURRENCY ? Number(process.env.MAX_CONCURRENCY) : undefined,
  },
});

const { continued, started } = stack.recovered;
if (continued.length + started.length > 0) {
  say(`  resumed ${continued.length + started.length} run(s) that were in flight when Stepwise last stopped`);
}
say(`  ready in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);

if (process.env.STEPWISE_READY_JSON) {
  // Machine-readable line for scripts and tests that start the stack.
  console.log(JSON.stringify({ ready: true, url: stack.url, apiKey, endpoints: stack.endpoints, containerPids: stack.containerPids }));
} else {
  console.log(`Stepwise is running at ${stack.url}
  API key:  ${apiKey}
  model:    ${stack.model.offline ? "the offline model (deterministic; demonstrates the orchestration, does not reason)" : `${stack.model.name} at ${stack.model.url}`}
  data:     ${dataDir ?? "in memory (nothing is kept)"}

Try it:
  curl -s -X POST ${stack.url}/v1/runs -H "Authorization: Bearer ${apiKey}" -H "Content-Type: application/json" \\
    -d '{"input": "Compute 17*23 and (120/8)+2^5, then write a short report", "mode": "plan_solve"}'
  curl -N ${stack.url}/v1/runs/<runId>/stream -H "Authorization: Bearer ${apiKey}"
`);
}

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    await stack.close();
    process.exit(0);
  });
}
