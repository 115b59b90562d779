import type { ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire as requireFrom } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as z from "zod";
import { SandboxRequest, type SandboxResult } from "../contracts/sandbox.js";
import { SANDBOX_MEMORY } from "../contracts/sandboxMemory.js";
import { collectOutputs } from "./collectOutputs.js";
import { isolation, killGroup, pickSandboxUid, spawnIsolated } from "./isolatedProcess.js";

/** The process's own script, and Pyodide's package: beside the sources, or beside the Lambda bundle. */
const ENTRY = realpathSync(fileURLToPath(new URL("./pythonProcess.mjs", import.meta.url)));
const PYODIDE_DIR = realpathSync(path.dirname(requireFrom(import.meta.url).resolve("pyodide")));
/** Pyodide's standard library with its bytecode, built at install time (compileStdlib.ts): no process compiles it again. */
export const COMPILED_STDLIB = path.join(PYODIDE_DIR, "python_stdlib.compiled.zip");
/** What Python's objects may take on the V8 side (Pyodide's own JS); its WebAssembly memory is capped apart. */
const JS_HEAP_MB = SANDBOX_MEMORY.jsHeapMb;
/** The result line on the control pipe: the value and the traceback are cut to the output limit anyway. */
const MAX_CONTROL_BYTES = 4 * 1024 * 1024;

/** What the process reports on its control pipe; it may have been taken over by the code, so checked. */
const ProcessReport = z.object({
  value: z.string().nullable(),
  error: z.string().nullable(),
  refused: z.array(z.string().max(500)).max(100),
  ms: z.number(),
});

/**
 * One sandbox process: started with Pyodide loaded and a scratch folder of its own, it takes one
 * piece of code, reports, and is gone. Nothing one call leaves behind (in memory, on disk, in
 * Python or JavaScript) is there for the next, which gets a new process.
 */
class PythonProcess {
  readonly ready: Promise<void>;
  private child?: ChildProcess;
  private scratch?: string;
  private uid = pickSandboxUid();
  private ownUser = false;
  /** Whether it keeps the event loop alive: while it starts, and once a call has taken it; a ready spare does not. */
  private held = true;
  private taken = false;
  private control = "";
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private onExit!: (outcome: { code: number | null; signal: NodeJS.Signals | null }) => void;

  constructor(
    readonly memoryMb: number,
    private readonly entry = ENTRY,
  ) {
    this.exited = new Promise((resolve) => (this.onExit = resolve));
    this.ready = this.start();
    this.ready.catch(() => this.stop());
  }

  private async start(): Promise<void> {
    if (!existsSync(COMPILED_STDLIB)) {
      throw new Error("The sandbox's compiled standard library is missing; build it with `npm run build:sandbox`.");
    }
    const how = await isolation([this.entry, path.join(PYODIDE_DIR, "pyodide.asm.wasm")]);
    this.ownUser = how.ownUser;
    const scratch = mkdtempSync(path.join(tmpdir(), "stepwise-sandbox-"));
    this.scratch = scratch;
    for (const folder of [scratch, path.join(scratch, "files"), path.join(scratch, "output")]) {
      mkdirSync(folder, { recursive: true });
      this.own(folder);
    }
    const child = spawnIsolated(
      {
        entry: this.entry,
        args: [pathToFileURL(path.join(PYODIDE_DIR, "pyodide.mjs")).href, scratch, String(this.memoryMb * 1024 * 1024), COMPILED_STDLIB],
        readable: [PYODIDE_DIR, scratch],
        writable: [path.join(scratch, "output")],
        heapMb: JS_HEAP_MB,
      },
      how,
      this.uid,
    );
    this.child = child;
    this.hold(this.held);
    // "close", not "exit": the process has ended and everything it wrote to its pipes has been read.
    child.once("close", (code, signal) => this.onExit({ code, signal }));
    child.once("error", () => this.onExit({ code: null, signal: null }));
    const controlPipe = child.stdio[3] as NodeJS.ReadableStream;
    controlPipe.setEncoding("utf8");
    controlPipe.on("data", (text: string) => {
      if (this.control.length < MAX_CONTROL_BYTES) this.control += text;
    });
    const startupErrors = collect(pipesOf(child).stderr, 4_000);
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (this.control.startsWith("ready\n")) resolve();
      };
      controlPipe.on("data", check);
      void this.exited.then(({ code, signal }) =>
        reject(
          new Error(`the Python sandbox exited (${signal ?? code}) before it was ready: ${startupErrors.text().trim().slice(0, 1_000)}`),
        ),
      );
    });
    startupErrors.stop();
    if (!this.taken) this.hold(false);
  }

  /** Runs the request's code in this process, which is gone afterwards. */
  async run(request: z.output<typeof SandboxRequest>): Promise<Omit<SandboxResult, "startMs">> {
    const { child, scratch } = this;
    if (!child || !scratch) throw new Error("The sandbox process is used before it started.");
    const pipes = pipesOf(child);
    for (const file of request.files) {
      const target = path.join(scratch, "files", file.name);
      writeFileSync(target, Buffer.from(file.base64, "base64"), { mode: 0o444 });
      this.own(target);
    }
    const stdout = collect(pipes.stdout, request.maxOutputChars);
    const stderr = collect(pipes.stderr, request.maxOutputChars);
    const began = performance.now();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, request.timeoutMs);
    pipes.stdin.on("error", () => undefined); // the process may be gone before it reads its job
    pipes.stdin.end(JSON.stringify({ code: request.code }));
    const { code, signal } = await this.exited;
    clearTimeout(timer);
    const runMs = performance.now() - began;
    const output = { stdout: stdout.text(), stderr: stderr.text() };
    try {
      if (timedOut) {
        return {
          ...output,
          value: null,
          error: `TimeoutError: the code ran for more than ${request.timeoutMs / 1000} s and was stopped.`,
          timedOut,
          outputs: [],
          refused: [],
          runMs,
          notice: null,
        };
      }
      const report = ProcessReport.safeParse(parseLine(this.control.split("\n")[1]));
      if (!report.success) {
        const memory = signal === "SIGABRT" || code === 134 || /out of memory/i.test(output.stderr);
        const error = memory
          ? "MemoryError: the code used more than the sandbox's memory and was stopped."
          : `SandboxError: the interpreter stopped (${signal ?? `exit code ${code}`}) before it reported a result.`;
        return { ...output, value: null, error, timedOut, outputs: [], refused: [], runMs, notice: null };
      }
      const collected = collectOutputs(path.join(scratch, "output"));
      return {
        ...output,
        value: report.data.value === null ? null : cut(report.data.value, request.maxOutputChars),
        error: report.data.error === null ? null : cut(report.data.error, request.maxOutputChars),
        timedOut,
        outputs: collected.outputs,
        refused: [...report.data.refused, ...collected.refused],
        runMs: report.data.ms,
        notice: null,
      };
    } finally {
      this.stop();
    }
  }

  /** A call takes the process: from now on it keeps the event loop alive until it exits. */
  take(): void {
    this.taken = true;
    this.hold(true);
  }

  private hold(held: boolean): void {
    this.held = held;
    const child = this.child;
    if (!child) return;
    const handles = [child, ...child.stdio] as ({ ref?: () => void; unref?: () => void } | null)[];
    for (const handle of handles) (held ? handle?.ref : handle?.unref)?.call(handle);
  }

  /** Kills the process (if it still runs) and removes its scratch folder. */
  stop(): void {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) killGroup(this.child);
    if (this.scratch) rmSync(this.scratch, { recursive: true, force: true });
  }

  /** With a user of its own, the process owns its scratch folder and nobody else can enter it. */
  private own(target: string): void {
    if (!this.ownUser) return;
    chownSync(target, this.uid, this.uid);
    if (target === this.scratch) chmodSync(target, 0o700);
  }
}

let spare: PythonProcess | undefined;

export interface RunOptions {
  /** Keep a process loaded for the next call, as a warm Lambda container does. */
  keepWarm?: boolean;
  /**
   * Another script in place of the Python interpreter, started the same way and speaking the same
   * protocol (tests run scripted attackers that already hold the JavaScript realm).
   */
  entry?: string;
}

/** Keeps one process with Pyodide loaded for the next call (a warm start), as a warm Lambda container would. */
export function prewarm(memoryMb = 512): Promise<void> {
  if (!spare || spare.memoryMb !== memoryMb) {
    spare?.stop();
    spare = new PythonProcess(memoryMb);
  }
  return spare.ready;
}

/** Stops the spare process (tests, shutdown). */
export async function stopSpare(): Promise<void> {
  spare?.stop();
  spare = undefined;
}

/**
 * Runs Python in a fresh sandbox process (see isolatedProcess.ts), within the limits: the process is
 * killed at the wall-time limit (whatever the code is doing), WebAssembly memory cannot grow past the
 * memory limit, stdout and stderr are cut, and what the code wrote to output/ is checked and read
 * after the process has exited.
 */
export async function runPython(input: SandboxRequest, options: RunOptions = {}): Promise<SandboxResult> {
  const request = SandboxRequest.parse(input);
  const began = performance.now();
  const taken = !options.entry && spare?.memoryMb === request.memoryMb ? spare : new PythonProcess(request.memoryMb, options.entry);
  if (taken === spare) spare = undefined;
  taken.take();
  if (options.keepWarm) void prewarm(request.memoryMb).catch(() => undefined);
  await taken.ready;
  const startMs = performance.now() - began;
  return { ...(await taken.run(request)), startMs };
}

/** Keeps the first `max` characters a stream sends and drains the rest. */
function collect(stream: NodeJS.ReadableStream, max: number) {
  let text = "";
  let more = false;
  stream.setEncoding("utf8");
  const onData = (chunk: string) => {
    if (text.length < max) text += chunk;
    else more = true;
  };
  stream.on("data", onData);
  return {
    text: () => (more || text.length > max ? cut(text, max) : text),
    stop: () => stream.off("data", onData),
  };
}

function parseLine(line: string | undefined): unknown {
  try {
    return line ? JSON.parse(line) : undefined;
  } catch {
    return undefined;
  }
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[cut at ${max} of more characters]`;
}

/** The child's standard pipes: it is spawned with stdio "pipe", so Node opens all three. */
function pipesOf(child: ChildProcess) {
  const { stdin, stdout, stderr } = child;
  if (!stdin || !stdout || !stderr) throw new Error("The sandbox process has no standard pipes.");
  return { stdin, stdout, stderr };
}
