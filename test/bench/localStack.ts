/**
 * `npm run bench:local`: the local stack's own figures (issue 12 item 3), printed, never asserted.
 * - start: wall time from spawning `npm start`'s entry point to its ready line, with the state
 *   machine cached (the usual start) — run once before to fill the cache;
 * - memory: the stack's resident set (VmRSS, VmHWM from /proc) after BENCH_MEMORY_RUNS runs
 *   (default 100; plan_solve and react mixed, 10 at a time), on a kept data folder.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "../support/client.js";
import { startStack } from "../support/localStack.js";

const RUNS = Number(process.env.BENCH_MEMORY_RUNS ?? 100);
const BATCH = 10;

function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

const dataDir = mkdtempSync(path.join(tmpdir(), "stepwise-bench-"));
try {
  const started = performance.now();
  const stack = await startStack({ STEPWISE_DATA_DIR: dataDir, OFFLINE_MODEL_LATENCY_MS: "20" }, []);
  const startMs = performance.now() - started;
  try {
    const client = new Client(stack.url, stack.apiKey);
    const atStart = memoryOf(stack.pid);
    for (let i = 0; i < RUNS; i += BATCH) {
      const ids = await Promise.all(
        Array.from(
          { length: Math.min(BATCH, RUNS - i) },
          async (_, j) =>
            (
              await client.submit(
                (i + j) % 2
                  ? { input: "What is 17*23?", mode: "react" }
                  : { input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve" },
              )
            ).runId,
        ),
      );
      await Promise.all(ids.map((id) => client.waitForEnd(id, 300_000)));
    }
    const after = memoryOf(stack.pid);
    console.log(
      JSON.stringify({
        startSeconds: Number((startMs / 1000).toFixed(1)),
        rssAtStartMiB: Math.round(atStart.rssMiB),
        runs: RUNS,
        rssAfterRunsMiB: Math.round(after.rssMiB),
        peakRssMiB: Math.round(after.peakMiB),
      }),
    );
    const met = (ok: boolean) => (ok ? "met" : "not met");
    console.log(`targets: start ≤ 10 s ${met(startMs <= 10_000)}; resident after ${RUNS} runs ≤ 300 MiB ${met(after.rssMiB <= 300)}`);
  } finally {
    await stack.stop();
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
