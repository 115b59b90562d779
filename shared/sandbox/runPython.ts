import { Worker } from "node:worker_threads";
import { SandboxRequest, type SandboxResult } from "../contracts/sandbox.js";

const WORKER = new URL("./pythonWorker.mjs", import.meta.url);
/** What Python's objects may take on the V8 side (Pyodide's own JS); its WebAssembly memory is capped in the worker. */
const JS_HEAP_MB = 256;

interface Started {
  worker: Worker;
  ready: Promise<void>;
  memoryMb: number;
}

let spare: Started | undefined;

/** A worker with Pyodide loaded, waiting for one piece of code. */
function startWorker(memoryMb: number): Started {
  const worker = new Worker(WORKER, {
    workerData: { memoryBytes: memoryMb * 1024 * 1024 },
    // Its own empty environment, no inherited flags, its own small V8 heap.
    env: {},
    execArgv: [],
    argv: [],
    stdout: true,
    stderr: true,
    resourceLimits: { maxOldGenerationSizeMb: JS_HEAP_MB, maxYoungGenerationSizeMb: 32 },
  });
  worker.unref();
  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (message: { type: string }) => {
      if (message.type !== "ready") return;
      worker.off("message", onMessage);
      resolve();
    };
    worker.on("message", onMessage);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the Python worker exited (${code}) before it was ready`)));
  });
  ready.catch(() => undefined);
  return { worker, ready, memoryMb };
}

/** Keeps one interpreter loaded for the next call (a warm start), as a warm Lambda container would. */
export function prewarm(memoryMb = 512): Promise<void> {
  if (!spare || spare.memoryMb !== memoryMb) {
    void spare?.worker.terminate();
    spare = startWorker(memoryMb);
  }
  return spare.ready;
}

/** Stops the spare interpreter (tests, shutdown). */
export async function stopSpare(): Promise<void> {
  const current = spare;
  spare = undefined;
  await current?.worker.terminate();
}

/**
 * Runs Python in a fresh interpreter in its own worker thread, within the limits: the thread is
 * terminated at the wall-time limit (whatever the code is doing), WebAssembly memory cannot grow
 * past the memory limit, stdout and stderr are cut. Every call gets a new interpreter: nothing
 * one piece of code leaves behind is seen by the next.
 */
export async function runPython(input: SandboxRequest, options: { keepWarm?: boolean } = {}): Promise<SandboxResult> {
  const request = SandboxRequest.parse(input);
  const began = performance.now();
  const taken = spare?.memoryMb === request.memoryMb ? spare : startWorker(request.memoryMb);
  if (taken === spare) spare = undefined;
  if (options.keepWarm) void prewarm(request.memoryMb);
  const { worker } = taken;
  try {
    await taken.ready;
  } catch (error) {
    void worker.terminate();
    throw error;
  }
  const startMs = performance.now() - began;
  return new Promise<SandboxResult>((resolve) => {
    const out = { stdout: "", stderr: "" };
    let settled = false;
    const append = (stream: "stdout" | "stderr", text: string) => {
      if (out[stream].length < request.maxOutputChars) out[stream] += text;
    };
    const finish = (result: Omit<SandboxResult, "stdout" | "stderr" | "startMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve({ ...result, stdout: cut(out.stdout, request.maxOutputChars), stderr: cut(out.stderr, request.maxOutputChars), startMs });
    };
    const runStarted = performance.now();
    const timer = setTimeout(() => {
      finish({
        value: null,
        error: `TimeoutError: the code ran for more than ${request.timeoutMs / 1000} s and was stopped.`,
        timedOut: true,
        outputs: [],
        runMs: performance.now() - runStarted,
      });
    }, request.timeoutMs);
    worker.on("message", (message: any) => {
      if (message.type === "stdout" || message.type === "stderr") append(message.type, message.text);
      if (message.type === "result") finish({ value: message.value ?? null, error: message.error ?? null, timedOut: false, outputs: message.outputs, runMs: message.ms });
    });
    worker.on("error", (error) => {
      const memory = /memory|heap|allocation/i.test(String(error));
      finish({ value: null, error: memory ? `MemoryError: the code used more than the sandbox's memory and was stopped.` : `SandboxError: ${String(error)}`, timedOut: false, outputs: [], runMs: performance.now() - runStarted });
    });
    worker.on("exit", () => finish({ value: null, error: "SandboxError: the interpreter stopped before it reported a result.", timedOut: false, outputs: [], runMs: performance.now() - runStarted }));
    worker.postMessage({ code: request.code, files: request.files });
  });
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[cut at ${max} of more characters]`;
}
