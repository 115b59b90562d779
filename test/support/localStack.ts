import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { LocalStack } from "../../infra/local/stack.js";

/** The emulated AWS endpoints behind the API (the stack's ready line), for tests that look behind it. */
export type StackEndpoints = LocalStack["endpoints"];

export interface StartOptions {
  /** Kept for callers that ask for the endpoints; the ready line always carries them. */
  exposeEndpoints?: boolean;
}

export interface RunningStack {
  url: string;
  apiKey: string;
  endpoints?: StackEndpoints;
  /** Extra tenants' keys, by tenant. */
  keys: Record<string, string>;
  logs: string[];
  stop(): Promise<void>;
}

/**
 * Starts the local stack (`npm start`'s entry point) in its own process, in memory, on a free port,
 * and resolves once it is listening. Tests then drive it over HTTP, like a client.
 */
export async function startStack(
  env: Record<string, string> = {},
  tenants: string[] = ["other"],
  options: StartOptions = {},
): Promise<RunningStack> {
  const keys = Object.fromEntries(tenants.map((t) => [t, `sk_test_${t}_${Math.random().toString(36).slice(2)}`]));
  void options;
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "infra/local/main.ts"], {
    env: {
      ...process.env,
      PORT: "0",
      STEPWISE_DATA_DIR: "memory",
      STEPWISE_READY_JSON: "1",
      STEPWISE_API_KEY: `sk_test_main_${Math.random().toString(36).slice(2)}`,
      STEPWISE_API_KEYS: Object.entries(keys).map(([t, k]) => `${t}=${k}`).join(","),
      OFFLINE_MODEL_LATENCY_MS: "50",
      OPENAI_API_KEY: "",
      OPENAI_BASE_URL: "",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  child.stderr!.on("data", (chunk) => logs.push(String(chunk)));
  const ready = await new Promise<{ url: string; apiKey: string; endpoints?: StackEndpoints }>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      logs.push(line);
      if (line.startsWith("{")) {
        try {
          const parsed = JSON.parse(line);
          if (parsed.ready) resolve({ url: parsed.url, apiKey: parsed.apiKey, endpoints: parsed.endpoints });
        } catch {
          // a log line that happens to start with "{"
        }
      }
    });
    child.once("exit", (code, signal) => reject(new Error(`local stack exited with ${signal ?? code}:\n${logs.join("")}`)));
  });
  return {
    ...ready,
    keys,
    logs,
    stop: () =>
      new Promise((resolve) => {
        // Already gone (exited, or killed by a signal from outside the test)?
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
