import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, startStepwise, stepwise, stepwiseIn } from "../support/inProcessCli.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * The `stepwise` command against the local stack. The two walk-throughs (`stepwise run` with and
 * without tool approval) run as a user would: a child process of the bin (infra/cli/stepwise.mjs),
 * its output read as text (no colours: stdout is a pipe, and NO_COLOR is set too), stdin closed.
 * The other commands run the same `main` in this process (test/support/inProcessCli.ts), with stdin
 * closed and stdout and stderr read as text: each child process starts tsx and the whole CLI again
 * (10-20 s on a loaded machine), which says nothing more about a command once the bin has run twice.
 */
let stack: RunningStack;
/** The two `stepwise run` commands the first two groups read, started together as soon as the stack is up. */
let planSolve: Promise<CliResult>;
let approveTools: Promise<CliResult>;

beforeAll(async () => {
  stack = await startStack();
  planSolve = cli(["run", TASK, "--mode", "plan_solve", ...conn()]);
  approveTools = cli(["run", TASK, "--mode", "plan_solve", "--approve-tools", "write", "--yes", ...conn()]);
  // A failure to spawn is reported where each is awaited.
  for (const started of [planSolve, approveTools]) started.catch(() => undefined);
});

afterAll(async () => {
  await stack?.stop();
});

const TASK = "Compute 17*23 and (120/8)+2^5, then write a short report";

/** The bin as a user runs it: a child process, stdin closed, stdout a pipe. */
function cli(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.resolve("infra/cli/stepwise.mjs"), ...args], {
      // The caller's STEPWISE_* must not leak in: the flags say where to go.
      env: { ...process.env, STEPWISE_URL: "", STEPWISE_API_KEY: "", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const conn = () => ["--url", stack.url, "--api-key", stack.apiKey];
const runIdIn = (output: string) => /Run (run_[A-Za-z0-9_-]+) submitted/.exec(output)?.[1];

describe("stepwise run (plan_solve)", () => {
  let result: CliResult;

  beforeAll(async () => {
    result = await planSolve;
  }, 300_000);

  it("exits 0 and says nothing on stderr", () => {
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).not.toContain("\x1b[");
  });

  it("shows the plan with its step statuses, to the end", () => {
    const { stdout } = result;
    expect(stdout).toContain("Plan: Plan for: Compute 17*23");
    expect(stdout).toMatch(/\[[ >]\] 1\. Gather the facts/);
    expect(stdout).toContain("[x] 1. Gather the facts");
    expect(stdout).toContain("[x] 2. Write the report");
    expect(stdout).toContain("- Evaluate 17*23 with the calculator");
  });

  it("shows both parallel tasks of the first step starting and finishing, by task id", () => {
    // (Not asserted: that they overlap in time; on a loaded machine one may finish before the other starts.)
    const { stdout } = result;
    expect(stdout).toContain("▶ s1.t1 started (step 1): Evaluate 17*23 with the calculator");
    expect(stdout).toContain("▶ s1.t2 started (step 1): Evaluate (120/8)+2^5 with the calculator");
    expect(stdout).toMatch(/^✓ s1.t1 done/m);
    expect(stdout).toMatch(/^✓ s1.t2 done/m);
  });

  it("prints each fact once: an agent's text, a task's result, the files", () => {
    const { stdout } = result;
    const count = (pattern: RegExp) => stdout.match(pattern)?.length ?? 0;
    expect(count(/^\s+\[s1\.t1\] Done\. 17\*23 = 391$/gm)).toBe(1);
    expect(count(/^\s+\[s1\.t2\] Done\. \(120\/8\)\+2\^5 = 47$/gm)).toBe(1);
    expect(count(/^✓ s1.t1 done: Done\. 17\*23 = 391$/gm)).toBe(0);
    expect(count(/^Plan: Plan for: Compute 17\*23/gm)).toBeGreaterThanOrEqual(1);
    expect(count(/^Files:/gm)).toBe(1);
  });

  it("shows the calculator calls and their results", () => {
    const { stdout } = result;
    // The persona of each call stands beside it.
    expect(stdout).toContain('[s1.t1] → calculator (Quantitative analyst) {"expression":"17*23"}');
    expect(stdout).toContain('[s1.t2] → calculator (Quantitative analyst) {"expression":"(120/8)+2^5"}');
    expect(stdout).toContain("[s1.t1] ← 17*23 = 391");
    expect(stdout).toContain("[s1.t2] ← (120/8)+2^5 = 47");
  });

  it("prints the answer with 391 and 47, the file and the usage", () => {
    const answer = result.stdout.slice(result.stdout.indexOf("\nAnswer:\n"));
    expect(answer.length).toBeGreaterThan(10);
    expect(answer).toContain("391");
    expect(answer).toContain("47");
    expect(answer).toMatch(/^Files: report\.md/m);
    expect(answer).toMatch(/Usage: \d+ model calls · \d+ prompt \+ \d+ completion tokens · \d+ tool calls/);
  });

  it("watch replays the ended run and exits 0; get prints it as JSON", async () => {
    const runId = runIdIn(result.stdout)!;
    expect(runId).toBeDefined();
    const [watched, got] = await Promise.all([stepwise(["watch", runId, ...conn()]), stepwise(["get", runId, ...conn()])]);
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stdout).toContain(`Run ${runId} is succeeded`);
    expect(watched.stdout).toContain("[s1.t1] ← 17*23 = 391");
    expect(watched.stdout).toContain("Answer:");

    expect(got.code, got.stderr).toBe(0);
    const run = JSON.parse(got.stdout);
    expect(run).toMatchObject({ runId, status: "succeeded", mode: "plan_solve" });
    expect(run.result).toContain("391");
  });

  it("files prints links that open without the key; files --download saves a file with the key, and never over one", async () => {
    const runId = runIdIn(result.stdout)!;
    const listed = await stepwise(["files", runId, ...conn()]);
    expect(listed.code, listed.stderr).toBe(0);
    const link = /^report\.md\ttext\/markdown[^\t]*\t\d+ bytes\t(\S+)$/m.exec(listed.stdout)?.[1];
    expect(link, listed.stdout).toBeDefined();
    const opened = await fetch(link!);
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain("17*23 = 391");

    const folder = await mkdtemp(path.join(tmpdir(), "stepwise-cli-download-"));
    try {
      const saved = await stepwiseIn(folder, ["files", runId, "--download", "report.md", ...conn()]);
      expect(saved.code, saved.stderr).toBe(0);
      expect(saved.stdout).toMatch(/^Saved .*report\.md \(\d+ bytes\)\.$/m);
      expect(await readFile(path.join(folder, "report.md"), "utf8")).toContain("17*23 = 391");
      const again = await stepwiseIn(folder, ["files", runId, "--download", "report.md", ...conn()]);
      expect([again.code, again.stderr]).toEqual([2, expect.stringContaining("report.md exists already")]);
      const missing = await stepwiseIn(folder, ["files", runId, "--download", "nope.md", ...conn()]);
      expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining("has no file named nope.md")]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe("stepwise run --approve-tools write --yes", () => {
  let result: CliResult;

  beforeAll(async () => {
    result = await approveTools;
  }, 300_000);

  it("exits 0 with the answer", () => {
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(result.stdout).toContain("Answer:");
    expect(result.stdout).toContain("391");
  });

  it("shows the tool approval, approves it automatically, and the run records the approval", async () => {
    const { stdout } = result;
    expect(stdout).toContain("? s2.t1 wants to run write_artifact");
    // Each argument readably: the file name as text, its Markdown line by line (not an escaped string).
    expect(stdout).toContain("    filename: report.md");
    expect(stdout).toContain("    content (markdown):\n      │ # Report\n      │ \n");
    expect(stdout.slice(stdout.indexOf("? s2.t1 wants"), stdout.indexOf("Approved automatically"))).not.toContain("\\n");
    expect(stdout).toContain("Approved automatically (--yes).");
    expect(stdout).toContain("✓ approved (tool call)");
    // In that order, and before the tool's result.
    const order = [
      "? s2.t1 wants to run write_artifact",
      "Approved automatically",
      "✓ approved (tool call)",
      "[s2.t1] ← Saved report.md",
    ].map((s) => stdout.indexOf(s));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(stdout).not.toContain("curl");

    const got = await stepwise(["get", runIdIn(stdout)!, ...conn()]);
    const run = JSON.parse(got.stdout);
    expect(run.approval).toEqual({ plan: false, tools: "write" });
    expect(run.interrupts).toEqual([
      expect.objectContaining({
        kind: "tool_approval",
        toolName: "write_artifact",
        status: "resolved",
        resolution: expect.objectContaining({ decision: "approve" }),
      }),
    ]);
  });
});

describe("stepwise, other paths", () => {
  it("--json prints the events as JSON lines, ending with run.succeeded", async () => {
    const result = await stepwise(["run", "What is 17*23?", "--mode", "react", "--json", ...conn()]);
    expect(result.code, result.stderr).toBe(0);
    const events = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0].type).toBe("run.started");
    expect(events.at(-1)).toMatchObject({ type: "run.succeeded", data: { result: expect.stringContaining("391") } });
    expect(result.stderr).toMatch(/Run run_\S+ submitted/);
  });

  it("without a terminal to ask on, an approval prints how to decide with curl and keeps watching", async () => {
    const command = startStepwise(["run", TASK, "--mode", "plan_solve", "--approve-plan", ...conn()]);
    const deadline = Date.now() + 60_000;
    while (!/curl -X POST '([^']+)'/.test(command.stdout()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const url = /curl -X POST '([^']+)'/.exec(command.stdout())?.[1];
    expect(url, command.stdout()).toMatch(/\/v1\/runs\/run_\S+\/interrupts\/int_\S+$/);
    expect(command.stdout()).toContain("? The plan needs your approval.");
    // Decide as the hint says; the command sees the decision and follows the run to its end.
    const res = await fetch(url!, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ decision: "approve" }),
    });
    expect(res.status).toBe(202);
    const { code, stdout } = await command.done;
    expect(code).toBe(0);
    expect(stdout).toContain("✓ approved (plan)");
    expect(stdout).toContain("Answer:");
  }, 90_000);

  it("a refused API key exits 3 with a clear message; a missing task exits 2", async () => {
    const [refused, usage] = await Promise.all([
      stepwise(["get", "run_x", "--url", stack.url, "--api-key", "sk_wrong"]),
      stepwise(["run", ...conn()]),
    ]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("The API key was refused: set STEPWISE_API_KEY or pass --api-key");

    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("'run' needs a task");
  });

  it("an unreachable API exits 3; the URL and key may come from the environment", async () => {
    const [down, missing] = await Promise.all([
      stepwise(["get", "run_x"], { STEPWISE_URL: "http://127.0.0.1:9", STEPWISE_API_KEY: "k" }),
      stepwise(["get", "run_doesnotexist"], { STEPWISE_URL: stack.url, STEPWISE_API_KEY: stack.apiKey }),
    ]);
    expect(down.code).toBe(3);
    expect(down.stderr).toContain("Could not reach the Stepwise API at http://127.0.0.1:9");

    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("No run with id run_doesnotexist");
  });
});

describe("stepwise list, decide, cancel, open", () => {
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${stack.apiKey}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return res.json() as Promise<any>;
  };
  const waitingRun = async () => {
    const { runId } = await api("POST", "/v1/runs", { input: TASK, mode: "plan_solve", approval: { plan: true } });
    const deadline = Date.now() + 60_000;
    let run = await api("GET", `/v1/runs/${runId}`);
    while (run.status !== "awaiting_input" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      run = await api("GET", `/v1/runs/${runId}`);
    }
    expect(run.status).toBe("awaiting_input");
    return { runId: runId as string, interruptId: run.pendingInterrupts[0].interruptId as string };
  };

  it("lists waiting runs, decides one, cancels another, and prints a run's console address", async () => {
    const [a, b] = await Promise.all([waitingRun(), waitingRun()]);

    const listed = await stepwise(["list", "--status", "awaiting_input", ...conn()]);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split("\n");
    expect(lines.find((line) => line.startsWith(a.runId))).toMatch(/awaiting_input\s+plan_solve\s+\d+[smh] ago\s+—\s+Compute 17\*23/);
    expect(lines.filter((line) => line.startsWith(b.runId))).toHaveLength(1);

    // Run a is decided (then watched), run b cancelled, and run a's address printed: three commands in their own order, side by side.
    const decideThenWatch = async () => {
      const decided = await stepwise(["decide", a.runId, a.interruptId, "approve", "--message", "looks right", ...conn()]);
      expect(decided.code, decided.stderr).toBe(0);
      expect(decided.stdout).toContain(`approve sent for ${a.interruptId} (plan_approval)`);
      const again = await stepwise(["decide", a.runId, a.interruptId, "reject", ...conn()]);
      expect(again.code).toBe(2); // already decided: the API says 409
      expect(again.stderr).toContain("409");

      const watched = await stepwise(["watch", a.runId, ...conn()]);
      expect(watched.code).toBe(0);
      expect(watched.stdout).toContain("✓ approved (plan): looks right");
    };
    const cancel = async () => {
      const cancelled = await stepwise(["cancel", b.runId, ...conn()]);
      expect(cancelled.code).toBe(0);
      expect((await api("GET", `/v1/runs/${b.runId}`)).status).toBe("cancelled");
    };
    const open = async () => {
      const opened = await stepwise(["open", a.runId, "--url", stack.url]);
      expect(opened.stdout.trim()).toBe(`${stack.url}/#/runs/${a.runId}`);
      expect((await fetch(`${stack.url}/`)).status).toBe(200);
    };
    await Promise.all([decideThenWatch(), cancel(), open()]);
  }, 120_000);
});
