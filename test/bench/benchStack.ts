// The local stack (`npm start`'s entry point) in a child process for the benchmark, with the probe
// preloaded: request counts per local server, CPU time and peak RSS are read over IPC.
import { type ChildProcess, fork } from "node:child_process";
import { createInterface } from "node:readline";
import { START_NODE_FLAGS, type StackEndpoints } from "../support/localStack.js";
import type { ProbeReading } from "./probe.js";

export interface BenchStack {
  url: string;
  apiKey: string;
  endpoints: StackEndpoints;
  /** Spawn to ready line, ms. */
  startMs: number;
  probe(): Promise<ProbeReading>;
  stop(): Promise<void>;
}

export async function startBenchStack(env: Record<string, string>): Promise<BenchStack> {
  const started = performance.now();
  const child: ChildProcess = fork("infra/local/main.ts", [], {
    // As `npm start` runs it, with the probe.
    execArgv: [...START_NODE_FLAGS, "--import", "./test/bench/probe.ts"],
    env: {
      ...process.env,
      PORT: "0",
      STEPWISE_DATA_DIR: "memory",
      STEPWISE_READY_JSON: "1",
      STEPWISE_LOG_FORMAT: "json",
      STEPWISE_API_KEY: `sk_bench_${Math.random().toString(36).slice(2)}`,
      OPENAI_API_KEY: "",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  const logs: string[] = [];
  child.stderr!.on("data", (chunk) => logs.push(String(chunk)));
  try {
    const ready = await new Promise<{ url: string; apiKey: string; endpoints: StackEndpoints }>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        if (!line.startsWith('{"ready"')) return;
        resolve(JSON.parse(line));
      });
      child.once("exit", (code) => reject(new Error(`stack exited with ${code}:\n${logs.join("")}`)));
    });
    const startMs = performance.now() - started;
    const probe = () =>
      new Promise<ProbeReading>((resolve) => {
        const onMessage = (message: any) => {
          if (!message?.probe) return;
          child.off("message", onMessage);
          resolve(message.probe);
        };
        child.on("message", onMessage);
        child.send("probe");
      });
    return { ...ready, startMs, probe, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
