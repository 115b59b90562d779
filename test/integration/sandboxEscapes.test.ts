import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BedrockAgentCoreClient } from "@aws-sdk/client-bedrock-agentcore";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_CODE_INTERPRETER_ID, LocalCodeInterpreter } from "../../infra/local/codeInterpreter/endpoint.js";
import { cpythonMissing } from "../../infra/local/codeInterpreter/pythonSession.js";
import { AgentCoreInterpreter } from "../../shared/sandbox/agentCoreInterpreter.js";
import { isolation } from "../../shared/sandbox/isolatedProcess.js";
import { runPython } from "../../shared/sandbox/runPython.js";

/**
 * Escapes tried by code that already holds the sandbox process's JavaScript realm (`globalThis`,
 * `process`, Node's modules): what Python code has once it gets past every Python-level block. A
 * scripted attacker runs in the interpreter's place, started exactly as the interpreter is. Each
 * try must be refused by the process around it, and the host must be as it was afterwards.
 */
const ATTACKER = fileURLToPath(new URL("../fixtures/sandboxAttacker.mjs", import.meta.url));

/** Runs attacker code in a sandbox process; the outcome of each `attempt(name, …)` by name. */
async function attack(code: string): Promise<Record<string, string>> {
  const result = await runPython({ code, timeoutMs: 30_000, memoryMb: 128 }, { entry: ATTACKER });
  expect(result.error).toBeNull();
  return JSON.parse(result.value!);
}

/** Every try was refused (by the permission model unless said otherwise); a failure names the try. */
function expectRefused(outcomes: Record<string, string>, how = /^refused: ERR_ACCESS_DENIED/): void {
  expect(Object.keys(outcomes).length).toBeGreaterThan(0);
  for (const [name, outcome] of Object.entries(outcomes)) expect(outcome, name).toMatch(how);
}

const root = process.getuid?.() === 0;
/** A stand-in for the stack's data folder: the local KMS key and credentials, readable by their owner only. */
let dataDir: string;
/** Another call's scratch folder, with a tenant's file in it. */
let otherCall: string;
let server: Server;
let port: number;
let hits = 0;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "stepwise-data-"));
  writeFileSync(path.join(dataDir, "local-kms.key"), "a".repeat(64), { mode: 0o600 });
  writeFileSync(path.join(dataDir, "local-credentials.json"), JSON.stringify({ accessKeyId: "k", secretAccessKey: "s" }), { mode: 0o600 });
  otherCall = mkdtempSync(path.join(tmpdir(), "stepwise-sandbox-"));
  mkdirSync(path.join(otherCall, "files"));
  writeFileSync(path.join(otherCall, "files", "salaries.csv"), "name,salary\nada,100\n");
  // Stands in for every endpoint on loopback: the table, S3, KMS, SQS, Lambda and the API.
  server = createServer((_req, res) => {
    hits++;
    res.end("secret");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(otherCall, { recursive: true, force: true });
  await new Promise((resolve) => server?.close(resolve));
});

describe("a sandbox process, attacked from its JavaScript realm", { timeout: 120_000 }, () => {
  it("is isolated as far as this machine allows: as root, no network and a user of its own", async () => {
    const how = await isolation([ATTACKER]);
    if (root) expect(how).toEqual({ network: "none", ownUser: true });
    else expect(["none", "host"]).toContain(how.network);
  });

  it("finds an empty environment: no credentials, keys or endpoints", async () => {
    process.env.STEPWISE_SANDBOX_CANARY = "host-secret";
    const outcomes = await attack(`await attempt("environment", () => process.env)`);
    expect(outcomes.environment).toBe("reached: {}");
  });

  it("cannot read the data folder, the local KMS key or the credentials", async () => {
    const outcomes = await attack(`
      const fs = await import("node:fs");
      await attempt("list the data folder", () => fs.readdirSync(${JSON.stringify(dataDir)}));
      await attempt("read the KMS key", () => fs.readFileSync(${JSON.stringify(path.join(dataDir, "local-kms.key"))}, "utf8"));
      await attempt("read the credentials", () => fs.readFileSync(${JSON.stringify(path.join(dataDir, "local-credentials.json"))}, "utf8"));
      await attempt("read the project's files", () => fs.readFileSync(${JSON.stringify(path.resolve("package.json"))}, "utf8"));
      await attempt("read /etc/passwd", () => fs.readFileSync("/etc/passwd", "utf8"));
    `);
    expectRefused(outcomes);
  });

  it("cannot read the environment of the process that started it, or of any other", async () => {
    const outcomes = await attack(`
      const fs = await import("node:fs");
      await attempt("the parent's environment", () => fs.readFileSync("/proc/" + process.ppid + "/environ", "utf8"));
      await attempt("init's environment", () => fs.readFileSync("/proc/1/environ", "utf8"));
      await attempt("its own memory map", () => fs.readFileSync("/proc/self/maps", "utf8"));
    `);
    expectRefused(outcomes);
  });

  it("cannot read other calls' files", async () => {
    const outcomes = await attack(`
      const fs = await import("node:fs");
      await attempt("list the scratch folders", () => fs.readdirSync(${JSON.stringify(tmpdir())}));
      await attempt("read another call's input", () => fs.readFileSync(${JSON.stringify(path.join(otherCall, "files", "salaries.csv"))}, "utf8"));
    `);
    expectRefused(outcomes);
  });

  it("cannot write outside its output folder", async () => {
    const marker = path.join(tmpdir(), `stepwise-escape-${process.pid}`);
    const outcomes = await attack(`
      const fs = await import("node:fs");
      await attempt("write to /tmp", () => fs.writeFileSync(${JSON.stringify(marker)}, "x"));
      await attempt("write into the data folder", () => fs.writeFileSync(${JSON.stringify(path.join(dataDir, "planted"))}, "x"));
      await attempt("change its own inputs", () => fs.writeFileSync(scratch + "/files/planted", "x"));
      await attempt("write to shared memory", () => fs.writeFileSync("/dev/shm/stepwise-planted", "x"));
    `);
    expectRefused(outcomes);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(dataDir).sort()).toEqual(["local-credentials.json", "local-kms.key"]);
    expect(readFileSync(path.join(dataDir, "local-kms.key"), "utf8")).toBe("a".repeat(64));
  });

  it("cannot start a process, a worker, an addon, WASI or the inspector", async () => {
    const outcomes = await attack(`
      const cp = await import("node:child_process");
      await attempt("spawn a shell", () => cp.spawnSync("/bin/sh", ["-c", "id"]).stdout?.toString());
      await attempt("exec", () => cp.execSync("id").toString());
      const { Worker } = await import("node:worker_threads");
      await attempt("start a worker", () => new Worker("1", { eval: true }) && "started");
      await attempt("load an addon", () => process.dlopen({ exports: {} }, "/lib/x86_64-linux-gnu/libc.so.6"));
      await attempt("start WASI", async () => new (await import("node:wasi")).WASI({ version: "preview1" }) && "started");
      await attempt("open the inspector", async () => (await import("node:inspector")).open(0));
    `);
    expectRefused(outcomes, /^refused: ERR_(ACCESS_DENIED|DLOPEN_DISABLED)/);
  });

  it("cannot reach Node's internal bindings", async () => {
    const outcomes = await attack(`
      await attempt("process.binding('fs')", () => Object.keys(process.binding("fs")));
      await attempt("process.binding('spawn_sync')", () => Object.keys(process.binding("spawn_sync")));
      await attempt("process._linkedBinding", () => process._linkedBinding("fs"));
    `);
    expectRefused(outcomes, /^refused: /);
  });

  it.runIf(root)("cannot open a socket to the stack's endpoints on loopback, nor signal the stack", async () => {
    const outcomes = await attack(`
      const net = await import("node:net");
      const connect = (host) => new Promise((resolve, reject) => {
        const socket = net.connect(${port}, host);
        socket.once("connect", () => { socket.destroy(); resolve("connected"); });
        socket.once("error", reject);
      });
      await attempt("connect to 127.0.0.1", () => connect("127.0.0.1"));
      await attempt("connect to localhost over IPv6", () => connect("::1"));
      await attempt("fetch an endpoint", async () => (await fetch("http://127.0.0.1:${port}/")).text());
      await attempt("signal the parent", () => process.kill(process.ppid, 0));
    `);
    expectRefused(outcomes, /^refused: /);
    expect(hits).toBe(0);
  });

  it("leaves nothing behind for the next call", async () => {
    const first = await runPython(
      {
        code: `
          const fs = await import("node:fs");
          globalThis.leftBehind = "from the first call";
          fs.writeFileSync(scratch + "/output/left.txt", "mine");
          await attempt("remember the folder", () => scratch);
        `,
        timeoutMs: 30_000,
        memoryMb: 128,
      },
      { entry: ATTACKER },
    );
    const firstScratch = JSON.parse(first.value!)["remember the folder"].slice("reached: ".length);
    // The first call's output came back to it, and its scratch folder is gone.
    expect(first.outputs.map((o) => o.name)).toEqual(["left.txt"]);
    expect(existsSync(firstScratch)).toBe(false);
    const outcomes = await attack(`
      const fs = await import("node:fs");
      await attempt("see the first call's global", () => globalThis.leftBehind ?? "nothing");
      await attempt("see the first call's output", () => fs.readdirSync(scratch + "/output"));
      await attempt("read the first call's folder", () => fs.readdirSync(${JSON.stringify(firstScratch)}));
    `);
    expect(outcomes["see the first call's global"]).toBe("reached: nothing");
    expect(outcomes["see the first call's output"]).toBe("reached: []");
    expect(outcomes["read the first call's folder"]).toMatch(/^refused: /);
  });

  it("cannot hand back a host file through its output folder", async () => {
    const result = await runPython(
      {
        code: `
          const fs = await import("node:fs");
          await attempt("link to a host file", () => fs.symlinkSync("/etc/passwd", scratch + "/output/passwd"));
          await attempt("link to its own input", () => fs.linkSync(scratch + "/files/in.txt", scratch + "/output/hard.txt"));
          fs.mkdirSync(scratch + "/output/sub");
          fs.writeFileSync(scratch + "/output/sub/kept.txt", "kept");
        `,
        files: [{ name: "in.txt", base64: Buffer.from("input").toString("base64") }],
        timeoutMs: 30_000,
        memoryMb: 128,
      },
      { entry: ATTACKER },
    );
    const outcomes = JSON.parse(result.value!);
    // Whatever the permission model let through, nothing but the plain file comes back.
    expect(result.outputs.map((o) => [o.name, Buffer.from(o.base64, "base64").toString()])).toEqual([["sub/kept.txt", "kept"]]);
    if (outcomes["link to a host file"].startsWith("reached")) expect(result.refused).toContain("passwd: a symbolic link, not saved");
    if (outcomes["link to its own input"].startsWith("reached")) expect(result.refused).toContain("hard.txt: a hard link, not saved");
  });
});

/**
 * The same escapes against the local code interpreter (CPython with the data libraries in
 * bubblewrap, behind the emulated AgentCore endpoint), tried from Python, which there is the whole
 * realm: the code runs in the session's own process. Skipped, saying why, where it cannot run.
 */
const cpythonMissingHere = cpythonMissing();
describe.skipIf(Boolean(cpythonMissingHere))("a code interpreter session, attacked from Python", { timeout: 300_000 }, () => {
  const limits = { memoryMb: 512, scratchMb: 64, processes: 32 };
  let interpreter: LocalCodeInterpreter;
  let client: BedrockAgentCoreClient;
  let sandbox: AgentCoreInterpreter;
  const credentials = { accessKeyId: "stepwise-local", secretAccessKey: "escape-suite-secret" };

  beforeAll(async () => {
    interpreter = new LocalCodeInterpreter({ credentials, limits, maxSessions: 8 });
    client = new BedrockAgentCoreClient({ endpoint: await interpreter.listen(), region: "us-east-1", credentials });
    sandbox = new AgentCoreInterpreter(client, LOCAL_CODE_INTERPRETER_ID, { sessionSeconds: 600 });
  });
  // Each task's session ends with it, as run_code's do when their task ends.
  afterEach(async () => {
    for (const key of [
      "escape/1",
      "escape/2",
      "task/first",
      "task/second",
      "bombs",
      "many",
      "flood/0",
      "flood/1",
      "flood/2",
      "flood/after",
    ])
      await sandbox.end(key);
  });
  afterAll(async () => {
    client?.destroy();
    await interpreter?.close();
  });

  /** Runs each try in the session; its outcome by name ("reached: …" or "refused: <error>"). */
  async function tries(session: string, attempts: Record<string, string>, timeoutMs = 60_000): Promise<Record<string, string>> {
    const code = [
      "import json",
      "outcomes = {}",
      `for name, attempt in json.loads(${JSON.stringify(JSON.stringify(attempts))}).items():`,
      "    try:",
      "        scope = {}",
      "        exec(attempt, scope)",
      "        outcomes[name] = 'reached: ' + repr(scope.get('result'))[:200]",
      "    except BaseException as error:",
      "        outcomes[name] = 'refused: ' + type(error).__name__ + ': ' + str(error)[:200]",
      "print(json.dumps(outcomes))",
    ].join("\n");
    const result = await sandbox.run({ code, session, timeoutMs });
    expect(result.error).toBeNull();
    return JSON.parse(result.stdout.trim().split("\n").at(-1)!);
  }

  it("finds an empty environment and no host file: not the data folder, the project, other sessions or /proc of the host", async () => {
    process.env.STEPWISE_SANDBOX_CANARY = "host-secret";
    const outcomes = await tries("escape/1", {
      environment: "import os; result = sorted(os.environ)",
      "the data folder": `result = open(${JSON.stringify(path.join(dataDir, "local-kms.key"))}).read()`,
      "the project's files": `result = open(${JSON.stringify(path.resolve("package.json"))}).read()`,
      "another call's input": `result = open(${JSON.stringify(path.join(otherCall, "files", "salaries.csv"))}).read()`,
      "the host's /etc/passwd": "result = open('/etc/passwd').read()",
      "init's environment": "result = open('/proc/1/environ').read()",
      "the host's processes": "import os; result = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())",
    });
    expect(outcomes.environment).not.toContain("STEPWISE_SANDBOX_CANARY");
    expect(outcomes.environment).not.toMatch(/AWS_|TABLE_NAME|OPENAI/);
    for (const name of ["the data folder", "the project's files", "another call's input", "the host's /etc/passwd"])
      expect(outcomes[name], name).toMatch(/^refused: FileNotFoundError/);
    // In its own PID namespace, "init" is the sandbox itself, and only its own processes are there.
    expect(outcomes["init's environment"]).not.toContain("host-secret");
    expect(JSON.parse(outcomes["the host's processes"]!.slice("reached: ".length)).length).toBeLessThan(5);
  });

  it("cannot reach the stack's endpoints, write the system, or signal the host", async () => {
    const outcomes = await tries("escape/2", {
      "connect to loopback": `import socket; result = socket.create_connection(("127.0.0.1", ${port}), timeout=2)`,
      "connect to the internet": `import socket; result = socket.create_connection(("1.1.1.1", 80), timeout=2)`,
      "resolve a name": `import socket; result = socket.gethostbyname("example.com")`,
      "write the system": "result = open('/usr/lib/planted', 'w').write('x')",
      "signal the stack": `import os; result = os.kill(${process.pid}, 0)`,
    });
    for (const [name, outcome] of Object.entries(outcomes)) expect(outcome, name).toMatch(/^refused: /);
    expect(hits).toBe(0);
  });

  it("a second task sees neither the first task's variables nor its files", async () => {
    await sandbox.run({ code: "secret = 'first task'\nopen('notes.txt', 'w').write(secret)", session: "task/first", timeoutMs: 60_000 });
    const outcomes = await tries("task/second", {
      "the first task's variable": "result = secret",
      "the first task's file": "result = open('notes.txt').read()",
    });
    expect(outcomes["the first task's variable"]).toMatch(/^refused: NameError/);
    expect(outcomes["the first task's file"]).toMatch(/^refused: FileNotFoundError/);
    // And the first task still has both.
    expect((await sandbox.run({ code: "print(secret, open('notes.txt').read())", session: "task/first" })).stdout).toBe(
      "first task first task\n",
    );
  });

  it("contains a fork bomb, a memory bomb and an endless loop, each with a clear tool error, and the next call gets a fresh session that says so", async () => {
    const forks = await sandbox.run({
      code: "import os\npids = []\ntry:\n    while True:\n        pid = os.fork()\n        if pid == 0:\n            import time; time.sleep(30); os._exit(0)\n        pids.append(pid)\nexcept OSError as error:\n    print('stopped after', len(pids), type(error).__name__)",
      session: "bombs",
      timeoutMs: 60_000,
    });
    expect(forks.stdout).toMatch(/^stopped after \d+ BlockingIOError/);
    expect(Number(/after (\d+)/.exec(forks.stdout)![1])).toBeLessThan(limits.processes);
    const memory = await sandbox.run({
      code: "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))",
      session: "bombs",
      timeoutMs: 60_000,
    });
    expect(memory.error).toMatch(/MemoryError|interpreter session ended/);
    const loop = await sandbox.run({ code: "while True:\n    pass", session: "bombs", timeoutMs: 2_000 });
    expect(loop).toMatchObject({ timedOut: true });
    expect(loop.error).toMatch(/^TimeoutError: the code ran for more than 2 s/);
    const next = await sandbox.run({ code: "print('alive')", session: "bombs" });
    expect(next.stdout).toBe("alive\n");
    expect(next.notice).toMatch(/^A new interpreter session/);
    for (const result of [forks, memory, loop, next]) expect(JSON.stringify(result)).not.toMatch(/\/work\/|\/tmp\/stepwise|node_modules/);
  });

  it("10,000 output files and links: the allowed ones come back, the rest are refused with reasons", async () => {
    const result = await sandbox.run({
      code: "import os\nfor i in range(10_000):\n    open(f'output/f{i:05d}.txt', 'w').write('x')\nos.symlink('/etc/passwd', 'output/a-link')",
      session: "many",
      timeoutMs: 120_000,
    });
    expect(result.error).toBeNull();
    expect(result.outputs).toHaveLength(50);
    expect(result.refused).toContain("a-link: a symbolic link, not saved");
    expect(result.refused.some((line) => /more than 50 files, not saved/.test(line))).toBe(true);
  });

  it("writing 2 GB in three parallel calls (to output/ and /tmp): each stays within its limits, the calls end with clear errors, and it keeps serving", async () => {
    const code = (target: string) =>
      `chunk = b'x' * (16 * 1024 * 1024)\nwith open('${target}', 'wb') as out:\n    for _ in range(128):\n        out.write(chunk)`;
    const results = await Promise.all(
      ["output/big.bin", "/tmp/big.bin", "output/big.bin"].map((target, i) =>
        sandbox.run({ code: code(target), session: `flood/${i}`, timeoutMs: 120_000 }),
      ),
    );
    for (const result of results) {
      expect(result.error).toMatch(/OSError: \[Errno (27|28)\] (File too large|No space left on device)/);
      expect(result.outputs.reduce((sum, o) => sum + Buffer.from(o.base64, "base64").byteLength, 0)).toBeLessThanOrEqual(4 * 1024 * 1024);
    }
    // What was left in output/ is past the output limit: refused before anything was read.
    expect(results[0]!.refused.join("\n")).toMatch(/big\.bin: the outputs would pass \d+ bytes, not saved/);
    // Every session's processes and files stayed within its memory limit (its control group's peak).
    const peaks = interpreter.started.slice(-3).map((session) => session.peakMemoryBytes());
    for (const peak of peaks) if (peak !== undefined) expect(peak).toBeLessThanOrEqual(limits.memoryMb * 1024 * 1024);
    expect((await sandbox.run({ code: "print(6 * 7)", session: "flood/after" })).stdout).toBe("42\n");
  });
});
