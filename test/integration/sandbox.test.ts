import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxRequest } from "../../shared/contracts/sandbox.js";
import { SANDBOX_MEMORY } from "../../shared/contracts/sandboxMemory.js";
import { prewarm, runPython, stopSpare } from "../../shared/sandbox/runPython.js";

/**
 * The Python sandbox itself (what the sandbox function runs): a real Pyodide interpreter in a
 * process of its own. Python-level escapes are the first fence, tried here from inside Python; what
 * an attacker past them meets is tried in sandboxEscapes.test.ts.
 */
const run = (code: string, extra: Partial<SandboxRequest> = {}) =>
  runPython({ code, timeoutMs: 20_000, memoryMb: 256, ...extra }, { keepWarm: true });
const SANDBOX_ENTRY = fileURLToPath(new URL("../../shared/sandbox/pythonProcess.mjs", import.meta.url));
const csv = (text: string) => ({ name: "sales.csv", base64: Buffer.from(text).toString("base64") });
/** Runs each try's code in one call, each in a fresh scope; what each raised (its traceback), by name. */
async function tryEach(tries: [string, string, RegExp][], extra: Partial<SandboxRequest> = {}): Promise<Record<string, string>> {
  const code = [
    "import json, traceback",
    "outcomes = {}",
    `for name, attempt in json.loads(${JSON.stringify(JSON.stringify(Object.fromEntries(tries.map(([name, code]) => [name, code]))))}).items():`,
    "    try:",
    "        exec(compile(attempt, 'main.py', 'exec'), {})",
    "        outcomes[name] = 'ran without an error'",
    "    except BaseException:",
    "        outcomes[name] = traceback.format_exc()",
    "print(json.dumps(outcomes))",
  ].join("\n");
  const result = await run(code, extra);
  expect(result.error).toBeNull();
  return JSON.parse(result.stdout);
}

afterAll(() => stopSpare());

describe("the Python sandbox", { timeout: 120_000 }, () => {
  it("runs the standard library, compiled at install, and reports stdout and the last value", async () => {
    const result = await run(
      "import csv, json, statistics, math, datetime, re\nprint('mean', statistics.mean([1, 2, 3, 4]))\nprint('from', statistics.__file__)\nmath.sqrt(81)",
    );
    expect(result).toMatchObject({ value: "9.0", error: null, timedOut: false });
    // From the bytecode built at install (npm run build:sandbox), not compiled again by this process.
    expect(result.stdout).toMatch(/^mean 2\.5\nfrom \/lib\/python3\d+\.zip\/statistics\.pyc\n$/);
  });

  it("analyses a CSV with the right figures and writes output files", async () => {
    const data = "region,month,amount\nnorth,jan,120.5\nsouth,jan,80\nnorth,feb,99.5\nsouth,feb,100\neast,feb,50\n";
    const code = [
      "import csv, statistics",
      "rows = list(csv.DictReader(open('files/sales.csv')))",
      "totals = {}",
      "for r in rows: totals[r['region']] = totals.get(r['region'], 0) + float(r['amount'])",
      "print(len(rows), sum(float(r['amount']) for r in rows), statistics.median(float(r['amount']) for r in rows))",
      "with open('output/totals.csv', 'w') as f:",
      "    f.write('region,total\\n' + ''.join(f'{k},{v}\\n' for k, v in sorted(totals.items())))",
    ].join("\n");
    const result = await run(code, { files: [csv(data)] });
    expect(result.error).toBeNull();
    expect(result.stdout).toBe("5 450.0 99.5\n");
    expect(result.outputs.map((o) => [o.name, Buffer.from(o.base64, "base64").toString()])).toEqual([
      ["totals.csv", "region,total\neast,50.0\nnorth,220.0\nsouth,180.0\n"],
    ]);
  });

  it("stops an infinite loop at the time limit", async () => {
    const result = await run("print('started', flush=True)\nwhile True:\n    pass", { timeoutMs: 1_500 });
    expect(result.timedOut).toBe(true);
    expect(result.error).toMatch(/TimeoutError: the code ran for more than 1.5 s/);
    expect(result.stdout).toBe("started\n");
    // The sandbox is still usable afterwards.
    expect((await run("1 + 1")).value).toBe("2");
  });

  it.each([
    ["one huge allocation", "x = bytearray(400 * 1024 * 1024)"],
    ["growing until it breaks", "chunks = []\nwhile True:\n    chunks.append(bytearray(8 * 1024 * 1024))"],
  ])("contains a memory bomb: %s", async (_name, code) => {
    // No spare kept at this size: one would replace the spare the other cases take.
    const result = await runPython({ code, timeoutMs: 20_000, memoryMb: 128 });
    expect(result.error).toMatch(/MemoryError/);
    expect(result.timedOut).toBe(false);
  });

  // Each refusal is tried in one call, in a scope of its own, and its traceback kept: a process per
  // try would cost a Pyodide start each (seconds) and show nothing more (a fresh process per call is
  // what every other case here starts, and the tracebacks of uncaught errors are shown below).
  const refusals: [string, string, RegExp][] = [
    ["writing to an input file (mounted read-only)", "open('files/sales.csv', 'w').write('changed')", /PermissionError/],
    ["the host file system", "open('/etc/passwd').read()", /FileNotFoundError|No such file/],
    ["host files by another way", "import os\nos.listdir('/home')\nopen('/proc/self/environ').read()", /Error/],
    ["a socket", "import socket\nsocket.create_connection(('example.com', 80), timeout=2)", /PermissionError|Operation not permitted/],
    [
      "urllib",
      "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:9/', timeout=2).read()",
      /URLError|Operation not permitted|PermissionError/,
    ],
    ["the JS bridge (js)", "import js\njs.process.env", /ImportError: js is not available/],
    ["the JS bridge (pyodide)", "from pyodide.code import run_js\nrun_js('process.env')", /ImportError: pyodide(\.code)? is not available/],
    ["Pyodide's core module", "import _pyodide_core", /ImportError/],
    ["a kept module", "import sys\nsys.modules['js']", /KeyError: 'js'/],
    [
      "a built-in module made without the import system",
      "import _imp, importlib.machinery\n_imp.create_builtin(importlib.machinery.ModuleSpec('_pyodide_core', None))",
      /ImportError: _pyodide_core is not available/,
    ],
    [
      "the same through the built-in importer",
      "from importlib.machinery import BuiltinImporter, ModuleSpec\nBuiltinImporter.create_module(ModuleSpec('_pyodide_core', None))",
      /ImportError: _pyodide_core is not available/,
    ],
  ];
  let refused: Record<string, string>;
  it.each(refusals)("refuses %s, reporting the error", async (name, _code, error) => {
    refused ??= await tryEach(refusals, { files: [csv("a\n")] });
    expect(refused[name]).toMatch(error);
    expect(refused[name]).toMatch(/Traceback|Error/);
  });

  it("sees no host environment and no JS objects", async () => {
    const code = [
      "import os, gc",
      "proxies = [o for o in gc.get_objects() if type(type(o)).__name__ == '_JsProxyMetaClass' and not isinstance(o, type)]",
      "print(sorted(os.environ), len(proxies))",
    ].join("\n");
    process.env.STEPWISE_SANDBOX_CANARY = "host-secret";
    const result = await run(code);
    expect(result.stdout).toBe("['HOME', 'LANG'] 0\n");
    expect(result.stdout).not.toContain("host-secret");
  });

  it("reports syntax errors and exceptions with their tracebacks", async () => {
    const syntax = await run("def f(:\n    pass");
    expect(syntax.error).toMatch(/File "main.py", line 1[\s\S]*SyntaxError/);
    const raised = await run("def divide(a, b):\n    return a / b\n\ndivide(1, 0)");
    expect(raised.error).toMatch(/Traceback[\s\S]*line 4[\s\S]*line 2, in divide[\s\S]*ZeroDivisionError: division by zero/);
  });

  // Output subfolders and links are handed back (or refused) by one call: what each case shows is
  // which names come back and which reasons, and the one does not hide the other.
  it("hands back files in output/ subfolders as sub/name; refuses links there with a clear reason, keeping the other outputs", async () => {
    const code = [
      "import os",
      "os.makedirs('output/charts/2026')",
      "open('output/charts/2026/q1.csv', 'w').write('a\\n')",
      "open('output/kept.csv', 'w').write('x,y\\n')",
      "os.symlink('/etc/passwd', 'output/passwd')",
      "os.symlink('/sandbox/nowhere', 'output/dangling')",
    ].join("\n");
    const result = await run(code);
    expect(result.error).toBeNull();
    expect(result.outputs.map((o) => o.name).sort()).toEqual(["charts/2026/q1.csv", "kept.csv"]);
    expect(result.refused.sort()).toEqual(["dangling: a symbolic link, not saved", "passwd: a symbolic link, not saved"]);
  });

  it("keeps outputs up to the limits and says which it left out; cuts long output", async () => {
    const code = "for i in range(55):\n    open(f'output/f{i:02d}.txt', 'w').write('x')\nfor i in range(10000):\n    print('line', i)";
    const result = await run(code, { maxOutputChars: 500 });
    expect(result.outputs).toHaveLength(50);
    expect(result.refused).toHaveLength(5);
    expect(result.refused[0]).toBe("f50.txt: more than 50 files, not saved");
    expect(result.stdout.length).toBeLessThan(700);
    expect(result.stdout).toMatch(/\[cut at 500/);
  });
});

describe("the Python sandbox's bounds on what the code writes", { timeout: 300_000 }, () => {
  /** The sandbox processes' peak resident memory while `work` runs (each process's VmHWM, sampled). */
  async function peakRssMb<T>(work: Promise<T>): Promise<{ result: T; peaks: number[] }> {
    const peaks = new Map<number, number>();
    const sample = () => {
      for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
        try {
          // This checkout's sandbox processes only (other checkouts on the machine may run theirs).
          if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(SANDBOX_ENTRY)) continue;
          const hwm = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
          peaks.set(Number(pid), Math.max(peaks.get(Number(pid)) ?? 0, hwm));
        } catch {}
      }
    };
    const timer = setInterval(sample, 50);
    try {
      return { result: await work, peaks: [...peaks.values()] };
    } finally {
      clearInterval(timer);
    }
  }

  it("2 GB written to output/ and /tmp in three parallel calls: files count against the memory limit, each call ends with a clear error, and the sandbox keeps serving", async () => {
    const code = (target: string) =>
      `chunk = b'x' * (16 * 1024 * 1024)\nwith open('${target}', 'wb') as out:\n    for _ in range(128):\n        out.write(chunk)`;
    const { result: results, peaks } = await peakRssMb(
      Promise.all(
        ["output/big.bin", "/tmp/big.bin", "output/big.bin"].map((target) =>
          runPython({ code: code(target), memoryMb: 128, timeoutMs: 200_000 }),
        ),
      ),
    );
    for (const result of results) {
      expect(result.error).toMatch(/OSError: \[Errno \d+\] No space left on device|MemoryError/);
      expect(JSON.stringify(result)).not.toMatch(/\/work\/|node_modules|\/tmp\/stepwise/);
    }
    // What was left in output/ is past the output limit: refused before a byte was copied to the host.
    expect(results[0]!.outputs).toEqual([]);
    // Each process: its memory limit (128 MB of WebAssembly memory and files), 256 MB of heap, and Node itself.
    expect(peaks.length).toBeGreaterThanOrEqual(3);
    for (const peak of peaks) expect(peak).toBeLessThan(128 + 256 + 250);
    expect((await run("6 * 7")).value).toBe("42");
  });

  it("a call filled to its memory limit and the warm spare beside it fit the sandbox function's memory budget", async () => {
    const memoryMb = 256;
    // Python keeps 8 MB blocks until MemoryError, frees one, and holds the rest a while (the peak is sampled).
    const code =
      "import time\nblocks = []\ntry:\n    while True:\n        blocks.append(bytearray(8 * 1024 * 1024))\nexcept MemoryError:\n    blocks.pop()\ntime.sleep(3)\nlen(blocks) * 8";
    await prewarm(memoryMb); // a spare with Pyodide loaded is ready
    const { result, peaks } = await peakRssMb(run(code, { memoryMb }));
    const heldMb = Number(result.value);
    expect(heldMb).toBeGreaterThan(memoryMb / 2); // the call really filled its memory
    const [callPeak, ...sparePeaks] = [...peaks].sort((a, b) => b - a);
    console.log(
      `sandbox memory: the call ${Math.round(callPeak!)} MB (Python held ${heldMb} MB), spares ${sparePeaks.map(Math.round).join(", ")} MB`,
    );
    expect(callPeak).toBeLessThanOrEqual(memoryMb + SANDBOX_MEMORY.jsHeapMb + SANDBOX_MEMORY.processBaseMb);
    expect(sparePeaks.length).toBeGreaterThanOrEqual(1);
    for (const peak of sparePeaks) expect(peak).toBeLessThanOrEqual(SANDBOX_MEMORY.spareMb);
  });

  it("a file removed frees its room for the next; the files kept at once are what is bounded", async () => {
    // One call: six files kept at once fail; removed, the same 360 MB written in turns fit.
    const code = [
      "import glob, os, traceback",
      "try:",
      "    parts = [open(f'/tmp/part{i}.bin', 'wb').write(b'x' * (60 * 1024 * 1024)) for i in range(6)]",
      "except OSError:",
      "    print(traceback.format_exc().strip().splitlines()[-1])",
      "for name in glob.glob('/tmp/part*.bin'):",
      "    os.remove(name)",
      "for i in range(6):",
      "    with open('/tmp/part.bin', 'wb') as out:",
      "        out.write(b'x' * (60 * 1024 * 1024))",
      "    os.remove('/tmp/part.bin')",
      "print('wrote 360 MB in turns')",
    ].join("\n");
    const result = await run(code, { memoryMb: 256 });
    expect(result.error).toBeNull();
    expect(result.stdout).toMatch(/^OSError: \[Errno \d+\] No space left on device\nwrote 360 MB in turns\n$/);
  });
});
