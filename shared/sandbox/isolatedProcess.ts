import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomInt } from "node:crypto";

/**
 * How a sandbox process is started: a fresh Node process that can do nothing the call does not need.
 *
 * - Node's permission model: it reads only the paths it is given (the interpreter, the call's
 *   scratch folder) and writes only its output folder; no child processes, workers, addons, WASI or
 *   inspector.
 * - An empty environment: no credentials, keys or endpoints to find.
 * - Where the operating system allows it (Linux with util-linux's `unshare`): a network namespace of
 *   its own, so no socket reaches anything, not even loopback; and, when the host runs as root, a user
 *   of its own (a fresh uid per call), so neither another call's files nor the host's processes are
 *   its to read or signal, whatever the code reaches.
 *
 * Node documents its permission model as a seat belt, not a wall against malicious code: the OS
 * layers are what hold if it is bypassed. On Lambda there is no `unshare`: the function's own
 * network (a VPC without a route out) and role (its logs only) stand in for them.
 */
export interface IsolatedProcessOptions {
  /** The script to run (an absolute path; it must be readable by every user). */
  entry: string;
  args: string[];
  /** Paths the process may read (files, or folders with everything under them). */
  readable: string[];
  /** Paths the process may write. */
  writable: string[];
  /** V8 heap limit of the process. */
  heapMb: number;
}

/** What the machine allows, found once per process (a container). */
export interface Isolation {
  /** Has a network namespace of its own (no interfaces but a loopback that is down). */
  network: "none" | "host";
  /** Runs as a user of its own, picked per call (only when the host runs as root). */
  ownUser: boolean;
}

let probed: Promise<Isolation> | undefined;

/** The OS isolation this machine gives a sandbox process; probed once, by trying it. */
export function isolation(mustRead: string[]): Promise<Isolation> {
  probed ??= probe(mustRead);
  return probed;
}

async function probe(mustRead: string[]): Promise<Isolation> {
  const root = process.getuid?.() === 0;
  // `test -r` in the namespace answers whether the kernel and our privileges allow it, and whether a
  // user of its own can still read the interpreter (every folder above it must let others in).
  const check = ["--", "/usr/bin/test", ...mustRead.flatMap((path, i) => [...(i ? ["-a"] : []), "-r", path])];
  const tries: [string[], Isolation][] = root
    ? [
        [["--net", "--setuid", "65534", "--setgid", "65534", ...check], { network: "none", ownUser: true }],
        [["--net", ...check], { network: "none", ownUser: false }],
      ]
    : [[["--user", "--net", ...check], { network: "none", ownUser: false }]];
  for (const [args, result] of tries) {
    const works = await new Promise<boolean>((resolve) =>
      execFile(UNSHARE, args, { env: {}, timeout: 10_000 }, (error) => resolve(!error)),
    );
    if (works) return result;
  }
  return { network: "host", ownUser: false };
}

const UNSHARE = "/usr/bin/unshare";

/** Node's permission flag: stable as --permission from Node 22.13, experimental before. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission";

/** A uid (and gid) that no account on the host uses: one per call, so calls cannot reach each other. */
export const pickSandboxUid = () => randomInt(2_000_000, 3_000_000);

/**
 * Starts the process in its own process group (so a kill takes everything it is) with stdin, stdout,
 * stderr and a control pipe on fd 3. `uid` is used when the isolation has an own user.
 */
export function spawnIsolated(options: IsolatedProcessOptions, how: Isolation, uid: number): ChildProcess {
  const node = [
    process.execPath,
    PERMISSION_FLAG,
    ...[options.entry, ...options.readable].map((path) => `--allow-fs-read=${path}`),
    ...options.writable.map((path) => `--allow-fs-write=${path}`),
    `--max-old-space-size=${options.heapMb}`,
    // Warnings (the permission model is "experimental" on Node 20) would land in the code's stderr.
    "--no-warnings",
    options.entry,
    ...options.args,
  ];
  const wrap: string[] = [];
  if (how.network === "none") {
    const asRoot = process.getuid?.() === 0;
    const user = how.ownUser ? ["--setuid", String(uid), "--setgid", String(uid)] : asRoot ? [] : ["--user"];
    wrap.push(UNSHARE, "--net", ...user, "--");
  }
  const [command, ...args] = [...wrap, ...node];
  return spawn(command, args, { env: {}, cwd: "/", detached: true, stdio: ["pipe", "pipe", "pipe", "pipe"] });
}

/** Kills the process and anything in its group, at once. */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return; // it never started
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}
