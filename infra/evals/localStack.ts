/**
 * The local stack an eval runs against when it is given no --url: `npm start`'s entry point in a
 * child process (in memory, on a free port, the offline model unless OPENAI_API_KEY is set), stopped
 * when the eval ends. A process, not an import, so the eval runs the stack exactly as a person does.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface StartedStack {
  url: string;
  apiKey: string;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 300_000;

export async function startLocalStack(): Promise<StartedStack> {
  // The same node flags as `npm start` (package.json), in its own process group so stopping it takes its children.
  const child: ChildProcess = spawn(
    process.execPath,
    ["--optimize-for-size", "--max-semi-space-size=16", "--import", "tsx", "infra/local/main.ts"],
    {
      detached: true,
      env: { ...process.env, PORT: "0", STEPWISE_DATA_DIR: "memory", STEPWISE_READY_JSON: "1", STEPWISE_LOG_FORMAT: "json" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, name);
    } catch {
      // already gone
    }
  };
  // The stack is in a process group of its own, which Ctrl-C does not reach: take it down with us.
  const killOnExit = () => signal("SIGKILL");
  const interrupted = (name: NodeJS.Signals) => {
    signal("SIGKILL");
    process.exit(name === "SIGINT" ? 130 : 143);
  };
  process.once("exit", killOnExit);
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  const stop = async () => {
    process.off("exit", killOnExit);
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
    if (child.exitCode === null && child.signalCode === null) {
      signal("SIGTERM");
      const force = setTimeout(() => signal("SIGKILL"), 15_000);
      await exited;
      clearTimeout(force);
    }
  };
  const errors: string[] = [];
  child.stderr?.on("data", (chunk) => errors.push(String(chunk)));
  let timer: NodeJS.Timeout | undefined;
  try {
    const ready = await new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
        if (!line.startsWith('{"ready"')) return;
        const { url, apiKey } = JSON.parse(line) as { url: string; apiKey: string };
        resolve({ url, apiKey });
      });
      child.once("exit", (code, sig) => reject(new Error(`the local stack stopped (${sig ?? code}):\n${errors.join("").slice(-4000)}`)));
      timer = setTimeout(() => reject(new Error(`the local stack was not ready after ${READY_TIMEOUT_MS / 1000} s`)), READY_TIMEOUT_MS);
    });
    return { ...ready, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
