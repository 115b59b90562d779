/**
 * The event log written by many executors, each in a process of its own (as each executor is its
 * own Lambda container on AWS), against the local stack's DynamoDB endpoint: every executor appends
 * as one streaming a model's reply does (an `agent.delta` every 300 ms, tool calls between), all
 * to one run. Prints puts and requests per append and the append time (median, p99) at 16 and 40
 * executors, checks the log the run leaves (gap-free, each event once, the terminal event last),
 * and says whether issue 23's targets are met. Figures only; nothing asserts a duration.
 */
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { connectTable } from "../../functions/awsClients.js";
import { EventLog } from "../../shared/store/events.js";
import { type BenchStack, startBenchStack } from "./benchStack.js";

const APPENDS = Number(process.env.BENCH_EVENTLOG_APPENDS ?? 30);
const DELTA_MS = Number(process.env.BENCH_EVENTLOG_DELTA_MS ?? 300);
const TARGETS = { putsPerAppend: 1.1, p99Ms: 50 };

interface Figures {
  executors: number;
  appends: number;
  puts: number;
  requests: number;
  p50: number;
  p99: number;
  logWhole: boolean;
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

async function executorsAppend(stack: BenchStack, executors: number): Promise<Figures> {
  const runId = `run_bench_${randomBytes(6).toString("hex")}`;
  const { dynamodb, region, tableName, credentials } = stack.endpoints;
  const children: ChildProcess[] = [];
  try {
    for (let w = 0; w < executors; w++) {
      const config = {
        endpoint: dynamodb,
        region,
        ...credentials,
        table: tableName,
        runId,
        writer: `task_${w}`,
        appends: APPENDS,
        deltaMs: DELTA_MS,
      };
      children.push(
        fork("test/bench/eventLogWriter.ts", [JSON.stringify(config)], {
          execArgv: ["--import", "tsx"],
          env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
          stdio: ["ignore", "inherit", "inherit", "ipc"],
        }),
      );
    }
    // Every executor loaded and connected before any appends: the appends start together.
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve, reject) => {
            child.once("message", resolve);
            child.once("exit", reject);
          }),
      ),
    );
    const results = await Promise.all(
      children.map(
        (child) =>
          new Promise<{ latencies: number[]; requests: Record<string, number> }>((resolve, reject) => {
            child.once("message", resolve as (message: unknown) => void);
            child.once("exit", (code) => reject(new Error(`an executor exited with ${code}`)));
            child.send("go");
          }),
      ),
    );
    const latencies = results.flatMap((r) => r.latencies);
    const count = (operation: string) => results.reduce((sum, r) => sum + (r.requests[operation] ?? 0), 0);
    const requests = results.reduce((sum, r) => sum + Object.values(r.requests).reduce((a, b) => a + b, 0), 0);
    // The run ends: its log must read 1 … n, every executor's events once and in order, the terminal event last.
    const table = connectTable(tableName, { endpoint: dynamodb, region, credentials });
    const log = new EventLog(table, 1);
    await log.append(runId, [{ type: "run.succeeded", data: { result: "done", files: [] } }], { close: true });
    const events = await log.list(runId, 0, 100_000);
    (await table.client()).destroy();
    const perWriter = new Map<string, number>();
    for (const e of events) if ("taskId" in e.data && e.data.taskId) perWriter.set(e.data.taskId, (perWriter.get(e.data.taskId) ?? 0) + 1);
    const logWhole =
      events.length === latencies.length + 1 &&
      events.every((e, i) => e.seq === i + 1) &&
      events.at(-1)!.type === "run.succeeded" &&
      [...perWriter.values()].every((n) => n === APPENDS) &&
      perWriter.size === executors;
    return {
      executors,
      appends: latencies.length,
      puts: count("PutItemCommand"),
      requests,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      logWhole,
    };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  }
}

export async function benchEventLog(): Promise<void> {
  console.log(
    `\n# Event log: executors in separate processes appending to one run (${APPENDS} appends each, one every ${DELTA_MS} ms), on the local stack`,
  );
  const stack = await startBenchStack({});
  try {
    await executorsAppend(stack, 4); // warm-up: dynalite's first requests
    console.log("executors  appends  puts/append  requests/append  append p50  append p99  log gap-free, each event once, terminal last");
    for (const executors of (process.env.BENCH_EVENTLOG_EXECUTORS ?? "1,16,40").split(",").map(Number)) {
      const f = await executorsAppend(stack, executors);
      const met = f.puts / f.appends <= TARGETS.putsPerAppend && f.p99 <= TARGETS.p99Ms;
      console.log(
        `${String(f.executors).padStart(9)}  ${String(f.appends).padStart(7)}  ${(f.puts / f.appends).toFixed(2).padStart(11)}  ${(f.requests / f.appends).toFixed(2).padStart(15)}  ${`${f.p50.toFixed(1)} ms`.padStart(10)}  ${`${f.p99.toFixed(1)} ms`.padStart(10)}  ${f.logWhole ? "yes" : "NO"}${executors === 40 ? `   targets (≤ ${TARGETS.putsPerAppend} puts/append, p99 ≤ ${TARGETS.p99Ms} ms): ${met ? "met" : "not met"}` : ""}`,
      );
    }
  } finally {
    await stack.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchEventLog();
