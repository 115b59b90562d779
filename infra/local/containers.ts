import { type ChildProcess, fork } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** container.ts beside this file, or container.js when the stack runs compiled (as the test suite runs it). */
const WORKER = fileURLToPath(new URL(`./container${path.extname(import.meta.url)}`, import.meta.url));
/** How long a stopping container may take before it is killed. */
const STOP_MS = 5_000;

interface Container {
  process: ChildProcess;
  ready: Promise<void>;
  pending: Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>;
}

type Reply = { ready: true } | { id: number; result: unknown } | { id: number; error: { name: string; message: string } };

/**
 * The step functions in separate processes, as Lambda runs them on AWS: each process is one warm
 * container with its own SDK clients, caches and event loop, and invocations go to them in turn.
 * What shares a process locally otherwise (group commit of event appends, coalesced reads) is
 * then shared only within a container, as on AWS. A container gets the stack's environment (the
 * handlers read everything from it) and loads the handlers before it answers; it stops with the
 * stack, and by itself when the stack is gone (its IPC channel closes, also on a crash). One that
 * dies fails its invocations as Lambda reports a crashed runtime, and a new one takes its place.
 */
export class LocalContainers {
  private readonly containers: Container[] = [];
  private next = 0;
  private nextId = 0;
  private closing = false;

  constructor(
    count: number,
    private readonly entries: readonly string[],
  ) {
    for (let i = 0; i < count; i++) this.containers.push(this.spawn());
  }

  /** Resolves once every container has loaded its handlers. */
  async ready(): Promise<void> {
    await Promise.all(this.containers.map((c) => c.ready));
  }

  /** The containers' process ids (logs and tests look at them). */
  get pids(): number[] {
    return this.containers.flatMap((c) => (c.process.pid === undefined ? [] : [c.process.pid])); // none: it failed to start
  }

  /** Invokes `entry` in the next container in turn; rejects as `invokeLambda` does. */
  async invoke(entry: string, event: unknown): Promise<unknown> {
    if (this.closing) throw new Error("the local stack is stopping");
    const index = this.next++ % this.containers.length;
    const container = this.containers[index];
    await container.ready;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      container.pending.set(id, { resolve, reject });
      container.process.send({ id, entry, event }, (error) => {
        if (!error) return;
        container.pending.delete(id);
        reject(error);
      });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.containers.map(
        ({ process: child }) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const timer = setTimeout(() => child.kill("SIGKILL"), STOP_MS);
            child.once("exit", () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill("SIGTERM");
          }),
      ),
    );
  }

  private spawn(): Container {
    // The stack's node flags (tsx among them) and environment; stdout and stderr are the stack's.
    const child = fork(WORKER, [...this.entries], { env: process.env, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const pending: Container["pending"] = new Map();
    const ready = new Promise<void>((resolve, reject) => {
      child.on("message", (reply: Reply) => {
        if ("ready" in reply) return resolve();
        const call = pending.get(reply.id);
        pending.delete(reply.id);
        if (!call) return;
        if ("error" in reply) call.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
        else call.resolve(reply.result);
      });
      child.once("exit", (code, signal) => {
        const cause = `the container (process ${child.pid}) exited with ${signal ?? code}`;
        reject(new Error(cause));
        const crash = { errorType: "Runtime.ExitError", errorMessage: `RequestId: local Error: Runtime exited: ${cause}`, trace: [] };
        for (const call of pending.values()) call.reject(Object.assign(new Error(JSON.stringify(crash)), { name: "Runtime.ExitError" }));
        pending.clear();
        if (this.closing) return;
        // Lambda starts a new container where one died.
        const index = this.containers.findIndex((c) => c.process === child);
        if (index >= 0) this.containers[index] = this.spawn();
      });
    });
    ready.catch(() => undefined); // a container that dies while starting is replaced; its callers see the error
    return { process: child, ready, pending };
  }
}
