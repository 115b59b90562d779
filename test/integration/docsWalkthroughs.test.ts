import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { evalCommand } from "../../infra/evals/main.js";
import { StepwiseClient } from "../../shared/apiClient/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * The walk-throughs of the docs, run as a person pastes them: each bash block is copied from its
 * page when the test runs, so the two cannot drift. Only the placeholders for what `npm start`
 * prints are filled in: its address (http://127.0.0.1:3000, here the test stack's) and its key
 * (sk_local_…).
 */
const pages = {
  readme: await readFile("README.md", "utf8"),
  walkthroughs: await readFile("docs/walkthroughs.md", "utf8"),
  protocols: await readFile("docs/protocols.md", "utf8"),
};

/** The bash blocks of a page's section under this heading (up to the next heading of any level). */
function bashBlocks(page: keyof typeof pages, heading: string): string[] {
  const lines = pages[page].split("\n");
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`${page} has no heading '${heading}'`);
  const blocks: string[] = [];
  let block: string[] | undefined;
  let fenced = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("```")) {
      if (!fenced && line === "```bash") block = [];
      else if (fenced && block) {
        blocks.push(`${block.join("\n")}\n`);
        block = undefined;
      }
      fenced = !fenced;
    } else if (block) block.push(line);
    else if (!fenced && /^#{1,6} /.test(line)) break;
  }
  return blocks;
}

// The walk-throughs are independent (each its own run and folder), so they run side by side.
describe.concurrent("the walk-throughs of the README and docs/, as written", () => {
  let stack: RunningStack;
  let dir: string;
  beforeAll(async () => {
    // The pasted `curl -N` does not resume a stream the server closes (after STREAM_MAX_SECONDS, 60 by
    // default): on a loaded machine a run can outlast that, so these streams are held open longer.
    // The offline model priced (gpt-4o-mini's list price): online evals judge only with a price to cap.
    stack = await startStack({ STREAM_MAX_SECONDS: "600", MODEL_PRICE_INPUT_PER_MTOK: "0.15", MODEL_PRICE_OUTPUT_PER_MTOK: "0.6" });
    dir = await mkdtemp(path.join(tmpdir(), "stepwise-walkthroughs-"));
  });
  afterAll(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * Runs a block in bash in a fresh folder as one paste into a terminal: bash reads it line by line
   * from its input, so a command that reads its input (a prompt) would take the rest of the paste,
   * as it would in a terminal. Resolves with its output and the folder.
   */
  async function paste(
    block: string,
    env: Record<string, string> = {},
    options: { replace?: [string, string][]; inProject?: boolean } = {},
  ): Promise<{ code: number | null; out: string; cwd: string }> {
    let script = block.replaceAll("http://127.0.0.1:3000", stack.url).replaceAll("sk_local_…", stack.apiKey);
    for (const [from, to] of options.replace ?? []) script = script.replaceAll(from, to);
    // A block that runs the project's own commands (npx stepwise) is pasted in the project folder, as the page says.
    const cwd = options.inProject ? process.cwd() : await mkdtemp(path.join(dir, "paste-"));
    return new Promise((resolve, reject) => {
      const child = spawn("bash", ["-e", "-s"], { cwd, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
      child.stdin.end(`${script}\n`);
      let out = "";
      child.stdout.on("data", (chunk) => (out += chunk));
      child.stderr.on("data", (chunk) => (out += chunk));
      child.once("error", reject);
      child.once("exit", (code) => resolve({ code, out, cwd }));
    });
  }

  const api = async (pathname: string) =>
    (await fetch(`${stack.url}${pathname}`, { headers: { authorization: `Bearer ${stack.apiKey}` } })).json() as Promise<any>;

  it("the first run: submit, watch the stream to the end, fetch the result", async ({ expect }) => {
    const [block] = bashBlocks("walkthroughs", "## The first run");
    expect(block).toContain("curl -N http://127.0.0.1:3000/v1/runs/$RUN/stream");
    const { code, out } = await paste(block!);
    expect(code).toBe(0);
    // The submitted run on a line of its own (the prompt is not left after it), kept in no shared file.
    expect(out).toMatch(/^\{"runId":"run_[^\n]*"status":"queued"[^\n]*\}\n/);
    expect(block).not.toMatch(/\/tmp\//);
    // The stream: events in order, ending with the run's success; then the result.
    expect(out.indexOf("event: plan.updated")).toBeGreaterThan(-1);
    expect(out.indexOf("event: run.succeeded")).toBeGreaterThan(out.indexOf("event: plan.updated"));
    const result = JSON.parse(out.slice(out.lastIndexOf('\n{"runId"') + 1));
    expect(result).toMatchObject({ status: "succeeded" });
    expect(result.result).toContain("17*23 = 391");
    expect(result.result).toContain("(120/8)+2^5 = 47");
  }, 120_000);

  it("the README's API example: submit, then the stream to the run's end", async ({ expect }) => {
    const [block] = bashBlocks("readme", "## The API in brief");
    const { code, out } = await paste(block!);
    expect(code, out).toBe(0);
    expect(out.indexOf("event: run.started")).toBeGreaterThan(-1);
    expect(out.indexOf("event: run.succeeded")).toBeGreaterThan(out.indexOf("event: run.started"));
    // The terminal event carries the answer.
    expect(out.slice(out.indexOf("event: run.succeeded"))).toContain("17*23 = 391");
  }, 120_000);

  it("analysing a file: upload, a Python analysis and an HTML report, its figures in the answer, the download", async ({ expect }) => {
    const [block] = bashBlocks("walkthroughs", "## Analysing a file (upload, Python, HTML report, download)");
    const { code, out, cwd } = await paste(block!, { KEY: stack.apiKey });
    expect(code).toBe(0);
    expect(out).toContain("event: file.created");
    expect(out).toContain("event: run.succeeded");
    expect(out).toContain('"name":"data-analysis-report.html"');
    const report = await readFile(path.join(cwd, "data-analysis-report.html"), "utf8");
    expect(report).toMatch(/<html/i);
    expect(report).toContain("450");
    // The answer carries the figures the analysis printed: amount's total and the sum by region.
    // (The run is the one the block listed the files of; other walk-throughs run meanwhile.)
    const runId = /"runId":"(run_[^"]+)"/.exec(out.slice(out.indexOf("event: run.succeeded")))?.[1];
    expect(runId, out).toBeDefined();
    const run = await api(`/v1/runs/${runId}`);
    expect(run.result).toContain("sales.csv: 5 rows, 3 columns");
    expect(run.result).toMatch(/\| amount \| 450\.00 \|/);
  }, 180_000);

  it("from a spreadsheet to slides: a workbook uploaded, the report and the deck written live, downloaded", async ({ expect }) => {
    const [block] = bashBlocks("walkthroughs", "## From a spreadsheet to slides");
    // Pasted in the project folder, as the page says: its packages are what `require` finds.
    const { code, out, cwd } = await paste(block!, { KEY: stack.apiKey, NODE_PATH: path.resolve("node_modules") });
    expect(code, out).toBe(0);
    // `uniq -c` counts each run of the same event: the runs of one type add up.
    const counted = (type: string) =>
      [...out.matchAll(/^\s*(\d+) event: (\S+)$/gm)].filter((m) => m[2] === type).reduce((sum, m) => sum + Number(m[1]), 0);
    expect(counted("code")).toBeGreaterThanOrEqual(2);
    expect(counted("report.delta")).toBeGreaterThanOrEqual(1);
    expect(out.indexOf("event: report.delta")).toBeLessThan(out.lastIndexOf("event: file.created"));
    expect(out).toMatch(/event: run\.succeeded\s*$/m);
    const html = await readFile(path.join(cwd, "data-analysis-report.html"), "utf8");
    expect(html).toMatch(/<img alt="amount by region" width="\d+" src="data:image\/png;base64,/);
    const pptx = await readFile(path.join(cwd, "data-analysis-report.pptx"));
    expect(pptx.subarray(0, 2).toString()).toBe("PK");
    expect(await readFile(path.join(cwd, "data-analysis-report.slides.html"), "utf8")).toContain('<section class="slide');
  }, 240_000);

  it("an AG-UI HttpAgent: its run pauses for a write, the next run approves it through resume, the answer comes", async ({ expect }) => {
    const block = bashBlocks("protocols", "## AG-UI").find((b) => b.includes("HttpAgent"));
    // Pasted in the project folder, as the page says: its packages are what `require` finds.
    const { code, out } = await paste(block!, { KEY: stack.apiKey, NODE_PATH: path.resolve("node_modules") });
    expect(code, out).toBe(0);
    expect(out).toMatch(/paused: \[\s*'Run write_artifact/);
    expect(out).toContain("17*23 = 391");
    expect(out).toContain("Files: report.md");
  }, 120_000);

  it("tools from an MCP server: with the server in a second terminal, the rest pasted as one block runs whole", async ({ expect }) => {
    const [serverBlock, block] = bashBlocks("walkthroughs", "## Tools from an MCP server");
    expect(serverBlock?.trim()).toBe("MCP_TOKEN=demo-token npx tsx infra/local/exampleMcpServer.ts");
    // The second terminal: the server, on a port of its own here.
    const port = String(3400 + Math.floor(Math.random() * 500));
    const server = spawn(process.execPath, ["--import", "tsx", "infra/local/exampleMcpServer.ts"], {
      env: { ...process.env, MCP_TOKEN: "demo-token", MCP_PORT: port },
      stdio: "ignore",
    });
    try {
      await expect
        .poll(
          () =>
            fetch(`http://127.0.0.1:${port}/mcp`, { method: "POST" }).then(
              (r) => r.status,
              () => 0,
            ),
          { timeout: 60_000 },
        )
        .toBeGreaterThan(0);
      const { code, out } = await paste(
        block!,
        { KEY: stack.apiKey, STEPWISE_URL: stack.url },
        { replace: [["127.0.0.1:3100", `127.0.0.1:${port}`]], inProject: true },
      );
      expect(code, out).toBe(0);
      expect(out).toContain('"name":"everything"');
      // Every step ran, the last one included: the source was removed.
      expect(out).toMatch(/approved/i);
      expect(out).toContain("remember the milk");
      const { sources } = await api("/v1/tool-sources");
      expect((sources ?? []).map((s: any) => s.name)).not.toContain("everything");
    } finally {
      server.kill();
    }
  }, 180_000);

  it("approving a write: pasted as one block, it waits for the question and approves", async ({ expect }) => {
    const [block] = bashBlocks("walkthroughs", "## Approving a write");
    const { code, out } = await paste(block!, { KEY: stack.apiKey });
    expect(code).toBe(0);
    const runId = /"runId":"(run_[^"]+)"/.exec(out)![1]!;
    expect(out).toMatch(/"status":"awaiting_input"/);
    await expect.poll(async () => (await api(`/v1/runs/${runId}`)).status, { timeout: 60_000, interval: 100 }).toBe("succeeded");
    const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
    expect(events.filter((e: any) => e.type === "interrupt.resolved").map((e: any) => e.data.decision)).toEqual(["approve"]);
    expect((await api(`/v1/runs/${runId}`)).files.map((f: any) => f.name)).toContain("report.md");
  }, 120_000);

  /** `npm run eval` as a function, against this stack, its output kept for the assertion messages. */
  async function evaluate(args: string[]) {
    const output: string[] = [];
    const io = { out: (t: string) => output.push(t), err: (t: string) => output.push(t), env: {} };
    const outcome = await evalCommand([...args, "--url", stack.url, "--api-key", stack.apiKey], io);
    return { ...outcome, output: output.join("") };
  }

  // The evals run after the walk-throughs above, not beside them: their eight runs would slow the
  // pasted ones, whose curl streams end after the stream's 60 s (they do not resume).
  it.sequential("npm run eval: the dataset of these walk-throughs (test/evals/walkthroughs.jsonl) passes against the offline model", async ({
    expect,
  }) => {
    const out = path.join(await mkdtemp(path.join(dir, "eval-")), "report");
    const { exitCode, report, files, output } = await evaluate(["test/evals/walkthroughs.jsonl", "--out", out, "--html"]);
    expect(exitCode, output).toBe(0);
    expect(report?.summary).toMatchObject({ cases: 8, passed: 8, failed: 0, score: 1 });
    expect(files).toEqual([`${out}.json`, `${out}.md`, `${out}.html`]);
    // Each case ran a real run, whose tool calls, tokens and latency the report carries.
    for (const c of report?.cases ?? []) {
      expect(c.runId).toMatch(/^run_/);
      expect(c.tokens).toBeGreaterThan(0);
      expect(c.latencyMs).toBeGreaterThan(0);
    }
    const first = report?.cases.find((c) => c.id === "first run (plan_solve)");
    expect(first?.checks.map((c) => c.check)).toContain("judge");
    expect(first?.toolCalls.filter((t) => t.tool === "calculator")).toHaveLength(2);
    expect(JSON.parse(await readFile(`${out}.json`, "utf8")).summary.passed).toBe(8);
    expect(await readFile(`${out}.md`, "utf8")).toContain("| react arithmetic | pass | 1 |");
  }, 600_000);

  it.sequential("npm run eval: a broken agent fails its cases with the reasons, --compare names them newly failing, a bad line is reported", async ({
    expect,
  }) => {
    const work = await mkdtemp(path.join(dir, "eval-broken-"));
    // Two cases of the walk-through dataset, and a line that does not parse between them.
    const lines = (await readFile("test/evals/walkthroughs.jsonl", "utf8")).split("\n");
    const dataset = path.join(work, "two.jsonl");
    await writeFile(dataset, [lines[0], '{"input": "Compute 1+1", "expect": {"contains": 2}}', lines[1]].join("\n"));
    const good = await evaluate([dataset, "--out", path.join(work, "good")]);
    expect(good.exitCode, good.output).toBe(1);
    expect(good.report?.cases.map((c) => [c.id, c.passed])).toEqual([
      ["first run (plan_solve)", true],
      ["line 2", false],
      ["react arithmetic", true],
    ]);
    expect(good.report?.cases[1]?.reasons[0]).toMatch(/^line 2 does not parse: expect\.contains: /);
    expect(good.report?.cases[1]?.runId).toBeUndefined();

    // The prompt under test loses its calculator: a saved agent whose tools leave it out.
    await new StepwiseClient(stack.url, stack.apiKey).saveAgent("broken", {
      instructions: "Work without a calculator.",
      tools: ["text_stats", "write_artifact"],
    });
    const broken = await evaluate([
      dataset,
      "--agent",
      "broken",
      "--compare",
      path.join(work, "good.json"),
      "--out",
      path.join(work, "broken"),
    ]);
    expect(broken.exitCode, broken.output).toBe(1);
    const reasons = (id: string) => broken.report?.cases.find((c) => c.id === id)?.reasons ?? [];
    expect(reasons("react arithmetic")).toEqual([
      'the answer does not contain "391"',
      expect.stringMatching(
        /^trajectory \(strict\) scored 0: expected call not made: calculator \{"expression":"17\*23"\}; unexpected call: text_stats/,
      ),
    ]);
    expect(reasons("first run (plan_solve)")).toEqual([
      'the answer does not contain "391"',
      'the answer does not contain "47"',
      'the judge scored 0 (below 0.5): The answer lacks "17*23 = 391", "(120/8)+2^5 = 47".',
      expect.stringMatching(/^trajectory \(superset\) scored 0: expected call not made: calculator \{"expression":"17\*23"\}; /),
    ]);
    expect(broken.output).toContain("- newly failing: first run (plan_solve), react arithmetic");
  }, 600_000);

  // Another tenant's (its settings touch none of the walk-throughs' runs), after them.
  it.sequential("online evals: a tenant's succeeded run is scored by its judges after it ends, on the run and in its events", async ({
    expect,
  }) => {
    const client = new StepwiseClient(stack.url, stack.keys.other!);
    const judges = [
      { name: "product", rubric: 'The answer gives "391".', threshold: 0.5 },
      { name: "colour", rubric: 'The answer names "purple".', threshold: 0.5 },
    ];
    const settings = await client.putSettings({ onlineEvals: { sampleRate: 1, judges, dailyCostCapUsd: 1 } });
    expect(settings.onlineEvals?.judges.map((j) => j.name)).toEqual(["product", "colour"]);

    const { runId } = await client.createRun({ input: "Compute 17*23", mode: "react" });
    await expect.poll(async () => (await client.getRun(runId)).status, { timeout: 120_000, interval: 200 }).toBe("succeeded");
    // Scored on the notify queue after the end: the offline model judges by the phrases each rubric quotes.
    await expect.poll(async () => (await client.getRun(runId)).evaluation?.status, { timeout: 120_000, interval: 200 }).toBe("scored");
    const { evaluation } = await client.getRun(runId);
    expect(evaluation?.judges.map((j) => [j.name, j.score, j.passed])).toEqual([
      ["product", 1, true],
      ["colour", 0, false],
    ]);
    expect(evaluation?.passed).toBe(false);
    expect(evaluation!.usage.promptTokens).toBeGreaterThan(0);
    expect(evaluation!.costUsd).toBeGreaterThan(0);
    const { events } = await client.listEvents(runId, { limit: 500 });
    expect(events.map((e) => e.type).slice(-2)).toEqual(["run.succeeded", "eval.scored"]);
  }, 300_000);
});
