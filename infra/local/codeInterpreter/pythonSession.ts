import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * One local code interpreter session: Debian's CPython with pandas, numpy and matplotlib, in
 * bubblewrap, kept for the whole session so that variables, imports and files live from one call
 * to the next. What the code meets:
 *
 * - no network (a network namespace of its own: only a loopback that is down), no other process
 *   (a PID namespace), no host file but the read-only system (`/usr`, the libraries' configuration);
 * - a private scratch folder as its working directory: a tmpfs of `scratchMb`, so files the code
 *   writes are bounded there and counted in its memory; `/tmp` the same, smaller;
 * - a user of its own (a fresh uid outside the namespace), an empty environment, no capabilities;
 * - a control group capping the memory of everything it runs (files in its tmpfs included) and the
 *   number of its processes, and rlimits as a second fence (data segment, file size, processes).
 *
 * Whatever the code writes on the control pipe is read only up to a bound.
 */
export interface SessionLimits {
  memoryMb: number;
  scratchMb: number;
  processes: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { memoryMb: 1024, scratchMb: 256, processes: 64 };

const DRIVER = fileURLToPath(new URL("./driver.py", import.meta.url));
const PYTHON = "/usr/bin/python3";
const BWRAP = "/usr/bin/bwrap";
const UNSHARE = "/usr/bin/unshare";
/** The libraries the runtime offers beside the standard library (checked at start). */
export const DATA_LIBRARIES = ["pandas", "numpy", "matplotlib"];
/** A reply is at most this long: the output limit of a read, in base64, and some room. */
const MAX_REPLY_CHARS = 8 * 1024 * 1024;

/** Why this machine cannot run the local CPython runtime, or undefined when it can (cheap: no Python starts). */
export function cpythonMissing(): string | undefined {
  const install = "apt-get install bubblewrap python3-pandas python3-numpy python3-matplotlib";
  if (process.platform !== "linux") return "it needs Linux (bubblewrap)";
  if (!existsSync(BWRAP) || !existsSync(PYTHON)) return `bubblewrap or Debian's Python is not installed (${install})`;
  const missing = DATA_LIBRARIES.filter((name) => !existsSync(`/usr/lib/python3/dist-packages/${name}`));
  if (missing.length) return `Debian's ${missing.join(", ")} for Python ${missing.length > 1 ? "are" : "is"} not installed (${install})`;
  const probe = spawnSync(UNSHARE, [...userArgs(pickUid()), "--", BWRAP, ...systemArgs(), "--", "/usr/bin/true"], {
    env: {},
    timeout: 20_000,
    encoding: "utf8",
  });
  if (probe.status !== 0) {
    const why = (probe.stderr || probe.error?.message || "").trim().split("\n").at(-1);
    return `bubblewrap cannot make its namespaces here (${why}); user namespaces may be disabled`;
  }
  return undefined;
}

const root = process.getuid?.() === 0;
const pickUid = () => randomInt(3_000_000, 4_000_000);
/** As root, a uid of its own, outside the namespace too; otherwise the caller's, in a user namespace. */
const userArgs = (uid: number) => (root ? ["--setuid", String(uid), "--setgid", String(uid)] : []);

/** What every session sees of the system: read-only, nothing of the host's own files. */
function systemArgs(): string[] {
  const args = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"];
  args.push(
    "--ro-bind",
    "/usr",
    "/usr",
    "--symlink",
    "usr/lib",
    "/lib",
    "--symlink",
    "usr/lib64",
    "/lib64",
    "--symlink",
    "usr/bin",
    "/bin",
  );
  // Debian's BLAS is chosen through /etc/alternatives; matplotlib reads /etc/matplotlibrc and fonts.
  for (const etc of ["/etc/alternatives", "/etc/matplotlibrc", "/etc/fonts", "/etc/ld.so.cache"]) args.push("--ro-bind-try", etc, etc);
  args.push("--proc", "/proc", "--dev", "/dev");
  return args;
}

export class PythonSession {
  readonly ready: Promise<void>;
  private readonly child: ChildProcess;
  private readonly cgroups: string[];
  private buffer = "";
  private waiting?: { resolve: (reply: Record<string, unknown>) => void; reject: (error: Error) => void };
  private queue: Promise<unknown> = Promise.resolve();
  private ended?: string;
  /** Why the session ended by itself (its interpreter died), for the next call's error. */
  readonly exited: Promise<string>;

  constructor(
    readonly id: string,
    readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
  ) {
    const uid = pickUid();
    this.cgroups = createCgroups(id, limits);
    const bwrap = [
      BWRAP,
      ...systemArgs(),
      ...["--size", String(limits.scratchMb * 1024 * 1024), "--tmpfs", "/sandbox"],
      ...["--size", String(16 * 1024 * 1024), "--tmpfs", "/tmp"],
      ...["--ro-bind", DRIVER, "/opt/stepwise/driver.py", "--chdir", "/sandbox", "--clearenv"],
      ...["--setenv", "HOME", "/sandbox", "--setenv", "LANG", "C.UTF-8", "--setenv", "MPLBACKEND", "Agg"],
      ...["--setenv", "MPLCONFIGDIR", "/sandbox/.matplotlib", "--setenv", "OPENBLAS_NUM_THREADS", "1"],
      ...["--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "PYTHONUNBUFFERED", "1"],
      PYTHON,
      "-I",
      "/opt/stepwise/driver.py",
    ];
    const memoryBytes = limits.memoryMb * 1024 * 1024;
    // Rlimits: allocations past the memory limit fail (MemoryError) rather than wake the OOM killer;
    // no file bigger than the scratch; no more processes than allowed; no core dumps.
    const prlimit = [
      "prlimit",
      `--data=${memoryBytes}`,
      `--fsize=${limits.scratchMb * 1024 * 1024}`,
      `--nproc=${limits.processes}`,
      "--core=0",
      "--",
    ];
    const command = [...prlimit, UNSHARE, ...userArgs(uid), "--", ...bwrap];
    // The shell puts itself in the session's control groups before it becomes the sandbox: nothing
    // the code starts can leave them.
    const joinGroups = this.cgroups.map((group) => `echo $$ > ${group}/cgroup.procs`).join(" && ");
    this.child = spawn("/bin/sh", ["-c", `${joinGroups ? `${joinGroups} && ` : ""}exec "$@"`, "sh", ...command], {
      env: {},
      cwd: "/",
      detached: true,
      stdio: ["pipe", "pipe", "pipe", "pipe"],
    });
    // What the code prints through the file descriptors themselves (a child process) is dropped.
    this.child.stdout?.resume();
    this.child.stderr?.resume();
    this.child.stdin?.on("error", () => undefined);
    const control = this.child.stdio[3] as NodeJS.ReadableStream;
    control.setEncoding("utf8");
    control.on("data", (text: string) => this.onData(text));
    this.exited = new Promise((resolve) => {
      this.child.once("close", (code, signal) => {
        const why =
          this.ended ??
          (signal === "SIGKILL" || code === 137 ? "it was killed (its memory limit?)" : `its interpreter exited (${signal ?? code})`);
        this.ended = why;
        this.waiting?.reject(new SessionDied(why));
        this.waiting = undefined;
        removeCgroups(this.cgroups);
        resolve(why);
      });
    });
    this.ready = this.next().then(() => undefined);
  }

  /** Sends one request and waits for its reply; requests of a session run one after another. */
  request(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const turn = this.queue.then(async () => {
      await this.ready;
      if (this.ended) throw new SessionDied(this.ended);
      const reply = this.next();
      this.child.stdin?.write(`${JSON.stringify(body)}\n`);
      return reply;
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** Kills the session's processes; its scratch (a tmpfs) goes with them. */
  stop(why = "it was stopped"): Promise<string> {
    this.ended ??= why;
    if (this.child.pid !== undefined && this.child.exitCode === null && this.child.signalCode === null) {
      try {
        process.kill(-this.child.pid, "SIGKILL");
      } catch {
        this.child.kill("SIGKILL");
      }
    }
    return this.exited;
  }

  get alive(): boolean {
    return this.ended === undefined;
  }

  /** The peak memory of the session's processes and files so far (its control group's), when known. */
  peakMemoryBytes(): number | undefined {
    for (const group of this.cgroups) {
      for (const file of ["memory.max_usage_in_bytes", "memory.peak"]) {
        try {
          return Number(readFileSync(path.join(group, file), "utf8"));
        } catch {}
      }
    }
    return undefined;
  }

  private next(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      if (this.ended) return reject(new SessionDied(this.ended));
      this.waiting = { resolve, reject };
      this.drain();
    });
  }

  private onData(text: string): void {
    this.buffer += text;
    if (this.buffer.length > MAX_REPLY_CHARS && !this.buffer.includes("\n")) {
      void this.stop("it sent a reply longer than the limit");
      return;
    }
    this.drain();
  }

  private drain(): void {
    const end = this.buffer.indexOf("\n");
    if (end < 0 || !this.waiting) return;
    const line = this.buffer.slice(0, end);
    this.buffer = this.buffer.slice(end + 1);
    const waiting = this.waiting;
    this.waiting = undefined;
    try {
      const reply = JSON.parse(line);
      if (typeof reply !== "object" || reply === null || Array.isArray(reply)) throw new Error("not an object");
      waiting.resolve(reply);
    } catch {
      waiting.reject(new Error("the interpreter sent a reply that is not JSON"));
    }
  }
}

/** The session's interpreter is gone (killed at its memory limit, exited, or stopped). */
export class SessionDied extends Error {
  constructor(readonly why: string) {
    super(`the session ended: ${why}`);
  }
}

/** Control groups capping the session's memory and processes, where this machine lets us make them. */
function createCgroups(id: string, limits: SessionLimits): string[] {
  const name = `stepwise-${id.replace(/[^A-Za-z0-9-]/g, "")}`;
  const memory = limits.memoryMb * 1024 * 1024;
  const made: string[] = [];
  const make = (parent: string | undefined, settings: [string, string][]) => {
    if (!parent) return;
    const group = path.join(parent, name);
    try {
      mkdirSync(group);
      for (const [file, value] of settings) {
        try {
          writeFileSync(path.join(group, file), value);
        } catch (error) {
          if (!file.includes("memsw") && !file.includes("swap")) throw error;
        }
      }
      made.push(group);
    } catch {
      try {
        rmdirSync(group);
      } catch {}
    }
  };
  const unified = cgroupV2();
  if (unified)
    make(unified, [
      ["memory.max", String(memory)],
      ["memory.swap.max", "0"],
      ["pids.max", String(limits.processes)],
    ]);
  else {
    make(cgroupV1("memory"), [
      ["memory.limit_in_bytes", String(memory)],
      ["memory.memsw.limit_in_bytes", String(memory)],
    ]);
    make(cgroupV1("pids"), [["pids.max", String(limits.processes)]]);
  }
  return made;
}

function removeCgroups(groups: string[]): void {
  for (const group of groups) {
    // The kernel lets a group go once its last process has; that can take a moment after a kill.
    for (let i = 0; i < 50; i++) {
      try {
        rmdirSync(group);
        break;
      } catch {
        execFileSync("sleep", ["0.02"]);
      }
    }
  }
}

/** This process's own cgroup v2 folder, if it is writable with the memory and pids controllers. */
function cgroupV2(): string | undefined {
  try {
    const own = readFileSync("/proc/self/cgroup", "utf8").match(/^0::(.*)$/m)?.[1];
    for (const base of ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]) {
      const folder = path.join(base, own ?? "/");
      const controllers = readFileSync(path.join(folder, "cgroup.controllers"), "utf8");
      if (/\bmemory\b/.test(controllers) && /\bpids\b/.test(controllers)) return folder;
    }
  } catch {}
  return undefined;
}

/** This process's own cgroup v1 folder of a controller. */
function cgroupV1(controller: string): string | undefined {
  try {
    const line = readFileSync("/proc/self/cgroup", "utf8")
      .split("\n")
      .find((l) => l.split(":")[1]?.split(",").includes(controller));
    const own = line?.split(":")[2];
    const folder = path.join("/sys/fs/cgroup", controller, own ?? "/");
    return existsSync(path.join(folder, "cgroup.procs")) ? folder : undefined;
  } catch {
    return undefined;
  }
}
