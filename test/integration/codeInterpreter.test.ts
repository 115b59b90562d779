import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpythonMissing } from "../../infra/local/codeInterpreter/pythonSession.js";
import type { EventPage } from "../../shared/apiClient/client.js";
import { aptInstall } from "../support/apt.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { barHeights } from "../support/pngBars.js";

/**
 * run_code on the code interpreter (the local emulation of AgentCore Code Interpreter: CPython
 * with pandas, numpy and matplotlib in bubblewrap), in the whole local stack, driven like a client.
 * Where the machine lacks bubblewrap or Debian's data libraries, they are installed if this user
 * may (root, or sudo without a password); otherwise the file is skipped and says what to install.
 */
/** Why the code interpreter cannot run here, after installing what it needs where this user may. */
function interpreterMissing(): string | undefined {
  if (!cpythonMissing()) return undefined;
  aptInstall(["bubblewrap", "python3-pandas", "python3-numpy", "python3-matplotlib"], "for the code interpreter's tests");
  return cpythonMissing();
}
const missing = interpreterMissing();
if (missing) console.warn(`Skipping the code interpreter's tests: ${missing}`);

const SALES = "region,month,amount\nnorth,jan,120.5\nsouth,jan,80\nnorth,feb,99.5\nsouth,feb,100\neast,feb,50\n";
/** matplotlib's first colour (tab:blue), which a bar chart's bars are drawn in. */
const TAB_BLUE: [number, number, number] = [31, 119, 180];

let stack: RunningStack;
let main: Client;

beforeAll(async () => {
  if (missing) return;
  stack = await startStack({ SANDBOX_RUNTIME: "agentcore", SANDBOX_TIMEOUT_MS: "60000" }, []);
  main = new Client(stack.url, stack.apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

async function upload(name: string, body: string) {
  const res = await fetch(`${stack.url}/v1/files?name=${name}`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "text/csv" },
    body,
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { fileId: string }).fileId;
}

async function download(runId: string, name: string): Promise<Buffer> {
  const res = await fetch(`${stack.url}/v1/runs/${runId}/files/${encodeURIComponent(name)}`, {
    headers: { authorization: `Bearer ${stack.apiKey}` },
    redirect: "manual",
  });
  expect(res.status).toBe(302);
  return Buffer.from(await (await fetch(res.headers.get("location")!)).arrayBuffer());
}

/** The stack's interpreter sessions still running (their driver on a process's command line). */
/** This test's interpreter processes (descendants of this process: other test files run sessions of their own). */
function sessionProcesses(): number {
  const parents = new Map<number, number>();
  const sessions: number[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      // The parent is the 4th field of stat, after the command name in parentheses (which may hold spaces).
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      parents.set(Number(pid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("/opt/stepwise/driver.py")) sessions.push(Number(pid));
    } catch {}
  }
  const ours = (pid: number): boolean => {
    for (let at: number | undefined = pid, hops = 0; at && hops < 64; at = parents.get(at), hops++) if (at === process.pid) return true;
    return false;
  };
  return sessions.filter(ours).length;
}

describe.skipIf(Boolean(missing))("run_code on the code interpreter", { timeout: 300_000 }, () => {
  it("react on an uploaded CSV: pandas loads the frame in one call, the next plots it; the PNG is a run file with the right bars", async () => {
    const fileId = await upload("sales.csv", SALES);
    const { runId } = await main.submit({ input: "Analyse the attached CSV", mode: "react", files: [fileId] });
    const run = await main.waitFor(runId, undefined, 240_000);
    expect(run.status).toBe("succeeded");
    const events = (await main.request<EventPage>("GET", `/v1/runs/${runId}/events?limit=500`)).body.events as any[];
    const calls = events.filter((e) => e.type === "tool.called" && e.data.tool === "run_code");
    const results = events.filter((e) => e.type === "tool.result" && e.data.tool === "run_code");
    expect(calls).toHaveLength(2);
    // The model was told what the runtime has, and wrote pandas for it.
    expect(calls[0].data.arguments.code).toContain("import pandas as pd");
    expect(results[0].data.output).toContain("5 rows, 3 columns: region, month, amount");
    // The second call uses the frame the first one loaded: the interpreter kept it.
    expect(calls[1].data.arguments.code).not.toContain("read_csv");
    expect(calls[1].data.arguments.code).toContain('plt.savefig("output/chart.png")');
    expect(results[1].data.ok).toBe(true);
    expect(results[1].data.output).toMatch(/north\s+220\.0\s*\nsouth\s+180\.0\s*\neast\s+50\.0/);
    expect(results[1].data.output).toMatch(/files written: chart\.png \(\d+ bytes\)/);
    expect(run.files.map((f: any) => f.name)).toContain("chart.png");
    // Three bars, tallest first, in the proportions of the totals (220 : 180 : 50).
    const bars = barHeights(await download(runId, "chart.png"), TAB_BLUE);
    expect(bars).toHaveLength(3);
    expect(bars[1]! / bars[0]!).toBeCloseTo(180 / 220, 1);
    expect(bars[2]! / bars[0]!).toBeCloseTo(50 / 220, 1);
    // The task's session ended with the task: no interpreter is left running.
    await expect.poll(sessionProcesses, { timeout: 15_000 }).toBe(0);
  });

  it("a second run cannot see the first run's variables or files", async () => {
    const code = "import os\nprint(sorted(os.listdir('.')), sorted(os.listdir('output')))\nprint(df)";
    const { runId } = await main.submit({ input: `Run this Python:\n\`\`\`python\n${code}\n\`\`\``, mode: "react" });
    const run = await main.waitFor(runId, undefined, 240_000);
    expect(run.status).toBe("succeeded");
    const events = (await main.request<EventPage>("GET", `/v1/runs/${runId}/events?limit=500`)).body.events as any[];
    const output = events.find((e) => e.type === "tool.result" && e.data.tool === "run_code").data.output as string;
    expect(output).toContain("NameError: name 'df' is not defined");
    expect(output).not.toContain("sales.csv");
    expect(output).not.toContain("chart.png");
  });
});
