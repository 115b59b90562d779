/**
 * The code interpreter's start-up: the sandbox function's handler (what Lambda runs) timed cold —
 * a new container, Pyodide loaded for the call — and warm, when the container's spare interpreter
 * is already loaded. Prints figures; asserts nothing.
 */
import { handler } from "../../functions/sandbox/handler.js";
import { prewarm, stopSpare } from "../../shared/sandbox/runPython.js";

const WARM_RUNS = Number(process.env.BENCH_SANDBOX_RUNS ?? 5);
const CODE = "import csv, io, statistics\nrows = list(csv.reader(io.StringIO('a\\n1\\n2\\n3\\n')))[1:]\nstatistics.mean(float(r[0]) for r in rows)";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchSandbox(): Promise<void> {
  console.log(`\n# Code interpreter start-up (Pyodide in a worker thread; ${WARM_RUNS} warm calls)`);
  try {
    const began = performance.now();
    const cold = await handler({ code: CODE, memoryMb: 512 });
    const coldTotal = performance.now() - began;
    const warm: { start: number; run: number; total: number }[] = [];
    for (let i = 0; i < WARM_RUNS; i++) {
      await prewarm(512); // a warm container: the spare interpreter is loaded before the call comes
      const t = performance.now();
      const result = await handler({ code: CODE, memoryMb: 512 });
      warm.push({ start: result.startMs, run: result.runMs, total: performance.now() - t });
      if (result.value !== "2.0") throw new Error(`unexpected result ${JSON.stringify(result)}`);
    }
    console.log(`cold: ${coldTotal.toFixed(0)} ms per call (interpreter start ${cold.startMs.toFixed(0)} ms, code ${cold.runMs.toFixed(0)} ms)`);
    console.log(
      `warm: median ${median(warm.map((w) => w.total)).toFixed(0)} ms per call (interpreter start ${median(warm.map((w) => w.start)).toFixed(1)} ms, code ${median(warm.map((w) => w.run)).toFixed(0)} ms), min ${Math.min(...warm.map((w) => w.total)).toFixed(0)} ms, max ${Math.max(...warm.map((w) => w.total)).toFixed(0)} ms`,
    );
  } finally {
    await stopSpare();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSandbox();
