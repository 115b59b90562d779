import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import type { LocalStack } from "../../infra/local/stack.js";
import { STACK_JS_ENV } from "./compiledStack.js";

/** The emulated AWS endpoints behind the API (the stack's ready line), for tests that look behind it. */
export type StackEndpoints = LocalStack["endpoints"];

export interface StartOptions {
  /** Kept for callers that ask for the endpoints; the ready line always carries them. */
  exposeEndpoints?: boolean;
  /** How long to wait for the ready line before giving up (and killing what was started). */
  readyTimeoutMs?: number;
}

export interface RunningStack {
  url: string;
  apiKey: string;
  endpoints?: StackEndpoints;
  /** The step functions' container processes (STEPWISE_LOCAL_CONTAINERS), empty when they share the stack's. */
  containerPids: number[];
  /** The API's container processes (STEPWISE_LOCAL_API_CONTAINERS), empty when the stack answers requests itself. */
  apiContainerPids: number[];
  /** Extra tenants' keys, by tenant. */
  keys: Record<string, string>;
  logs: string[];
  /** The stack's process id (also its process group's). */
  pid: number;
  /** Stops the stack as Ctrl-C does (SIGTERM), and whatever it started. */
  stop(): Promise<void>;
  /** Kills the stack's whole process tree at once (SIGKILL): a crash. */
  kill(): Promise<void>;
  /** Says that the test itself ends the stack's process (by its pid): that exit is not reported as a death. */
  expectExit(): void;
}

/** How many of a dead stack's last log lines are printed (its error is at the end). */
const LAST_LINES = 40;

/** The stacks of this test file that exited while tests still used them, as the message said on stderr. */
const deaths = new Map<number, string>();

/**
 * Throws when a stack of this file died after it was ready, so that the tests after the death
 * fail with why ("the local stack exited …") rather than with ECONNREFUSED (test/support/stackDeaths.ts).
 */
export function assertNoStackDied(): void {
  if (deaths.size > 0) throw new Error([...deaths.values()].join("\n\n"));
}

/** The stack's JSON log lines (Powertools' structured lines) whose `message` is `message`, parsed. */
export function logLines(stack: RunningStack, message: string): any[] {
  return stack.logs
    .flatMap((chunk) => chunk.split("\n"))
    .filter((line) => line.startsWith("{") && line.includes(message))
    .flatMap((line) => {
      try {
        const parsed = JSON.parse(line);
        return parsed.message === message ? [parsed] : [];
      } catch {
        return [];
      }
    });
}

/** A stack's last log lines, for a test's error when the stack died or a run went wrong. */
export function lastLines(logs: string[]): string {
  return logs.join("").split("\n").slice(-LAST_LINES).join("\n");
}

/** How `npm start` runs node (package.json's start script): tests and benchmarks run the stack the same way. */
export const START_NODE_FLAGS = ["--optimize-for-size", "--max-semi-space-size=16", "--import", "tsx"];
/** The same, for the stack compiled to JavaScript: no tsx. */
const COMPILED_NODE_FLAGS = START_NODE_FLAGS.filter((flag) => flag !== "--import" && flag !== "tsx");

/**
 * Starts the local stack (`npm start`'s entry point) in its own process group, in memory, on a free
 * port, and resolves once it is listening. Tests then drive it over HTTP, like a client. If it does
 * not get ready (exits, or the time runs out), it is killed, grandchildren included, and this throws.
 */
export async function startStack(
  env: Record<string, string> = {},
  tenants: string[] = ["other"],
  options: StartOptions = {},
): Promise<RunningStack> {
  const keys = Object.fromEntries(tenants.map((t) => [t, `sk_test_${t}_${Math.random().toString(36).slice(2)}`]));
  // Its own process group (detached), so killing the group takes any grandchildren with it.
  // The stack compiled once for this test run (test/support/compiledStack.ts), else its sources through tsx.
  const compiled = process.env[STACK_JS_ENV];
  const entry = compiled
    ? [...COMPILED_NODE_FLAGS, path.join(compiled, "infra/local/main.js")]
    : [...START_NODE_FLAGS, "infra/local/main.ts"];
  const child: ChildProcess = spawn(process.execPath, entry, {
    detached: true,
    env: {
      ...process.env,
      PORT: "0",
      STEPWISE_DATA_DIR: "memory",
      STEPWISE_READY_JSON: "1",
      STEPWISE_LOG_FORMAT: "json",
      STEPWISE_API_KEY: `sk_test_main_${Math.random().toString(36).slice(2)}`,
      STEPWISE_API_KEYS: Object.entries(keys)
        .map(([t, k]) => `${t}=${k}`)
        .join(","),
      OFFLINE_MODEL_LATENCY_MS: "50",
      OPENAI_API_KEY: "",
      OPENAI_BASE_URL: "",
      // The tests that run the code interpreter say so (SANDBOX_RUNTIME=agentcore); the others keep Pyodide's output.
      SANDBOX_RUNTIME: "pyodide",
      // Off unless a test turns it on: the title's model call after a session's first turn would change the counts of model calls.
      STEPWISE_SESSION_TITLES: "false",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  /** Set once a test or its hooks stop the stack: any exit before that is a death worth reporting. */
  let stopping = false;
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // the group is gone already
    }
  };
  // If the test process itself ends, take the stack with it.
  const onExit = () => signalGroup("SIGKILL");
  process.once("exit", onExit);
  const stop = async () => {
    stopping = true;
    // Stopped by its test: its death (if it died) was reported to the tests that ran meanwhile.
    deaths.delete(child.pid!);
    process.off("exit", onExit);
    if (!gone()) {
      signalGroup("SIGTERM");
      // An orderly stop takes well under this; past it, force.
      const timer = setTimeout(() => signalGroup("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    }
    signalGroup("SIGKILL"); // grandchildren that outlived the stack
  };
  const kill = async () => {
    stopping = true;
    process.off("exit", onExit);
    signalGroup("SIGKILL");
    if (!gone()) await exited;
  };

  const logs: string[] = [];
  child.stderr!.on("data", (chunk) => logs.push(String(chunk)));
  const lines = createInterface({ input: child.stdout! });
  let timer: NodeJS.Timeout | undefined;
  try {
    const ready = await new Promise<{
      url: string;
      apiKey: string;
      endpoints?: StackEndpoints;
      containerPids: number[];
      apiContainerPids: number[];
    }>((resolve, reject) => {
      lines.on("line", (line) => {
        logs.push(`${line}\n`);
        if (line.startsWith("{")) {
          try {
            const parsed = JSON.parse(line);
            if (parsed.ready)
              resolve({
                url: parsed.url,
                apiKey: parsed.apiKey,
                endpoints: parsed.endpoints,
                containerPids: parsed.containerPids ?? [],
                apiContainerPids: parsed.apiContainerPids ?? [],
              });
          } catch {
            // a log line that happens to start with "{"
          }
        }
      });
      child.once("exit", (code, signal) => reject(new Error(`local stack exited with ${signal ?? code}:\n${logs.join("")}`)));
      const timeoutMs = options.readyTimeoutMs ?? 240_000;
      timer = setTimeout(() => reject(new Error(`local stack not ready after ${timeoutMs} ms:\n${logs.join("")}`)), timeoutMs);
    });
    child.once("exit", (code, signal) => {
      // Stopped or killed on purpose: a clean exit, or the signal sent. A crash found while stopping
      // (the exit a moment after a test failed on it) is still reported.
      if (stopping && (code === 0 || signal !== null)) return;
      const death = `the local stack (pid ${child.pid}) exited unexpectedly with ${signal ?? `code ${code}`}; its last log lines:\n${lastLines(logs)}`;
      if (!stopping) deaths.set(child.pid!, death);
      process.stderr.write(`\n${death}\n`);
    });
    const expectExit = () => {
      stopping = true;
    };
    return { ...ready, keys, logs, pid: child.pid!, stop, kill, expectExit };
  } catch (error) {
    // Setup failed: nothing it started may outlive it.
    await kill();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
