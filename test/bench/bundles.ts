/**
 * `npm run bench -- bundles`: what each deployed function ships and how long its code takes to load.
 * Synthesizes the stack as `cdk deploy` does (esbuild bundles every handler into its asset folder),
 * zips each folder as Lambda receives it, and imports each bundled handler in a fresh Node process
 * (the cold part of a Lambda's init that is ours) on Lambda's Node (22, test/support/lambdaNode.ts;
 * the machine's own where that cannot run). Targets from issue 23: at most 1 MB zipped for a
 * function that runs no agent, 2 MB for one that does (the sandbox apart: it ships Pyodide), and a
 * cold import within 150 ms.
 */

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { App } from "aws-cdk-lib";
import type { Asset } from "aws-cdk-lib/aws-s3-assets";
import { AGENT_STEPS } from "../../infra/aws/handlers.js";
import { StepwiseStack } from "../../infra/aws/stack.js";
import { StepwiseFunction } from "../../infra/aws/stepwiseFunction.js";
import { lambdaNode } from "../support/lambdaNode.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** Under the project, so a bundle that leaves a module external resolves it as in the package. */
const workDir = path.join(root, "node_modules/.cache/stepwise-bench-bundles");
const IMPORTS = Number(process.env.BENCH_IMPORTS ?? 7);
const MB = 1024 * 1024;

export interface BundleFigures {
  name: string;
  agent: boolean;
  zippedBytes: number;
  /** Median of IMPORTS fresh processes (wall time, and CPU time: the figure a busy machine does not inflate); unset when the bundle does not load. */
  importMs?: number;
  importCpuMs?: number;
  loadError?: string;
  /** What a cold start reads and compiles: the entry and the chunks it imports statically (the rest loads on first use). */
  loadedBytes: number;
  /** Bytes over 127 in those files: one makes Node decode the whole file as UTF-16 before compiling it (slower). */
  nonAsciiBytes?: number;
}

/** An ES module's static imports of files beside it (esbuild's chunks), not its `import()`s. */
const STATIC_IMPORT = /(?:^|[;\n])\s*import\s*(?:[\w$*{}\s,]*?from\s*)?"(\.\/[^"]+\.mjs)"/g;

/** The entry file and every chunk it loads before its first line runs. */
function loadedAtImport(entry: string): string[] {
  const files = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const [, chunk] of readFileSync(file, "utf8").matchAll(STATIC_IMPORT)) visit(path.join(path.dirname(file), chunk!));
  };
  visit(entry);
  return [...files];
}

/** The Node the imports are timed on: Lambda's (22) where it runs here (fetched on the first use). */
let importNode: string | undefined;
const timingNode = () => (importNode ??= lambdaNode() ?? process.execPath);

/** One `import(handler)` in a fresh Node process: its wall and CPU time (the SDK's Node 20 warning off, as in Lambda). */
function coldImport(file: string): { wallMs: number; cpuMs: number } {
  // The Lambda runtime's global for streamed responses (the stream function wraps its handler at import).
  const runtime = "globalThis.awslambda = { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };";
  const script = `${runtime} const t = performance.now(), c = process.cpuUsage(); await import(${JSON.stringify(file)}); const u = process.cpuUsage(c); process.stdout.write(JSON.stringify([performance.now() - t, (u.user + u.system) / 1000])); process.exit(0);`;
  const run = spawnSync(timingNode(), ["--input-type=module", "-e", script], {
    env: {
      PATH: process.env.PATH,
      AWS_REGION: "eu-west-1",
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      TABLE_NAME: "bench",
    },
    encoding: "utf8",
  });
  if (run.status !== 0)
    throw new Error(`${file} does not load: ${run.stderr.split("\n").find((line) => /Error/.test(line)) ?? run.stderr}`);
  const [wallMs, cpuMs] = JSON.parse(run.stdout) as [number, number];
  return { wallMs, cpuMs };
}

/**
 * Each handler's median cold import over IMPORTS rounds, every round importing each handler once:
 * a burst of load on this shared machine then slows one import of every function, not all the
 * imports of one.
 */
function timeColdImports(handlers: { figure: BundleFigures; file: string }[]): void {
  const times = handlers.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
  for (let round = 0; round < IMPORTS; round++) {
    handlers.forEach(({ figure, file }, i) => {
      if (figure.loadError) return;
      try {
        const { wallMs, cpuMs } = coldImport(file);
        times[i]!.wall.push(wallMs);
        times[i]!.cpu.push(cpuMs);
      } catch (error) {
        figure.loadError = (error as Error).message;
      }
    });
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  handlers.forEach(({ figure }, i) => {
    if (figure.loadError) return;
    figure.importMs = median(times[i]!.wall);
    figure.importCpuMs = median(times[i]!.cpu);
  });
}

export function bundleFigures(): BundleFigures[] {
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const outdir = path.join(workDir, "cdk.out");
  const app = new App({ outdir });
  const stack = new StepwiseStack(app, "Stepwise", {
    env: { account: "123456789012", region: "eu-west-1" },
    openAiApiKeySecretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:stepwise/model-key-AbCdEf",
  });
  app.synth();
  const figures: BundleFigures[] = [];
  const handlers: { figure: BundleFigures; file: string }[] = [];
  for (const fn of stack.node.findAll().filter((c): c is StepwiseFunction => c instanceof StepwiseFunction)) {
    const name = fn.node.id;
    const asset = fn.node.tryFindChild("Code") as Asset | undefined;
    if (!asset) throw new Error(`${fn.node.path}: no code asset`);
    const folder = path.join(outdir, asset.assetPath);
    const zip = path.join(workDir, `${name}.zip`);
    execFileSync("zip", ["-qrX", zip, "."], { cwd: folder });
    const figure: BundleFigures = {
      name,
      agent: (AGENT_STEPS as readonly string[]).includes(name),
      zippedBytes: statSync(zip).size,
      loadedBytes: 0,
      nonAsciiBytes: 0,
    };
    for (const file of loadedAtImport(path.join(folder, "index.mjs"))) {
      const code = readFileSync(file);
      figure.loadedBytes += code.length;
      figure.nonAsciiBytes! += code.filter((byte) => byte > 127).length;
    }
    handlers.push({ figure, file: path.join(folder, "index.mjs") });
    figures.push(figure);
  }
  timeColdImports(handlers);
  for (const [name, layer] of [
    ["(tokenizer layer)", stack.steps.tokenizer],
    ["(work products layer)", stack.steps.workProducts],
  ] as const) {
    const asset = layer.node.tryFindChild("Code") as Asset;
    const layerZip = path.join(workDir, `${name.replace(/\W/g, "")}.zip`);
    execFileSync("zip", ["-qrX", layerZip, "."], { cwd: path.join(outdir, asset.assetPath) });
    figures.push({ name, agent: true, zippedBytes: statSync(layerZip).size, loadedBytes: 0 });
  }
  rmSync(workDir, { recursive: true, force: true });
  return figures;
}

export function printBundles(figures: BundleFigures[]): void {
  console.log(
    `function            agent  zipped     target    at import  ${`cold import (median of ${IMPORTS})`.padEnd(30)} target\n(Node ${execFileSync(timingNode(), ["--version"], { encoding: "utf8" }).trim()}; this machine's load average: ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores; wall times grow with it, CPU times much less)`,
  );
  for (const f of figures) {
    if (f.name.endsWith(" layer)")) {
      const what =
        f.name === "(tokenizer layer)" ? "its tables are read on the first count" : "each library is loaded when a tool first needs it";
      console.log(
        `${f.name.padEnd(19)} ${"".padEnd(6)} ${`${(f.zippedBytes / MB).toFixed(2)} MB`.padStart(9)}  (one layer the agent functions share; ${what})`,
      );
      continue;
    }
    const limit = f.name === "Sandbox" ? undefined : f.agent ? 2 * MB : MB;
    const size = `${(f.zippedBytes / MB).toFixed(2)} MB`.padStart(9);
    const sizeTarget = limit === undefined ? "(Pyodide)" : f.zippedBytes <= limit ? `≤ ${limit / MB} MB ✓` : `≤ ${limit / MB} MB ✗`;
    const time =
      f.importMs === undefined ? "does not load" : `${f.importMs.toFixed(0)} ms (CPU ${f.importCpuMs!.toFixed(0)} ms)`.padStart(7);
    const timeTarget = f.importMs !== undefined && f.importMs <= 150 ? "≤ 150 ms ✓" : "≤ 150 ms ✗";
    console.log(
      `${f.name.padEnd(19)} ${(f.agent ? "yes" : "no").padEnd(6)} ${size}  ${sizeTarget.padEnd(9)} ${`${(f.loadedBytes / MB).toFixed(2)} MB`.padStart(8)}   ${time.padEnd(30)} ${timeTarget}`,
    );
    if (f.loadError) console.log(`  ${f.loadError}`);
    if (f.nonAsciiBytes)
      console.log(
        `  ${f.nonAsciiBytes} non-ASCII bytes: Node decodes such a file as UTF-16 before compiling it (escape them in the source)`,
      );
  }
  const slow = figures.filter((f) => !f.name.endsWith(" layer)") && !(f.importMs !== undefined && f.importMs <= 150));
  console.log(
    slow.length === 0
      ? "Every function's cold import is within 150 ms."
      : `Over 150 ms (or not loading): ${slow.map((f) => f.name).join(", ")}. "at import" is the code a cold start reads and compiles: the entry and the chunks it imports statically; what a handler loads with import() waits for the first request that needs it.`,
  );
}
