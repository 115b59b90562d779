import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * The README's curl walk-throughs, run as a person pastes them: each bash block is copied from the
 * README when the test runs, so the two cannot drift. Only the README's placeholders for what
 * `npm start` prints are filled in: its address (http://127.0.0.1:3000, here the test stack's) and
 * its key (sk_local_…).
 */
const README = await readFile("README.md", "utf8");

/** The bash blocks of the README section under this heading (up to the next heading of any level). */
function bashBlocks(heading: string): string[] {
  const lines = README.split("\n");
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`README has no heading '${heading}'`);
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

describe("the README's walk-throughs, as written", () => {
  let stack: RunningStack;
  let dir: string;
  beforeAll(async () => {
    stack = await startStack();
    dir = await mkdtemp(path.join(tmpdir(), "stepwise-readme-"));
  });
  afterAll(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs a block in bash in a fresh folder, as pasted into a terminal; resolves with its output. */
  function paste(block: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
    const script = block.replaceAll("http://127.0.0.1:3000", stack.url).replaceAll("sk_local_…", stack.apiKey);
    return new Promise((resolve, reject) => {
      const child = spawn("bash", ["-e", "-c", script], { cwd: dir, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (chunk) => (out += chunk));
      child.stderr.on("data", (chunk) => (out += chunk));
      child.once("error", reject);
      child.once("exit", (code) => resolve({ code, out }));
    });
  }

  const api = async (pathname: string) =>
    (await fetch(`${stack.url}${pathname}`, { headers: { authorization: `Bearer ${stack.apiKey}` } })).json() as Promise<any>;

  it("the first run: submit, watch the stream to the end, fetch the result", async () => {
    const [block] = bashBlocks("## Walk-through (local)");
    expect(block).toContain("curl -N http://127.0.0.1:3000/v1/runs/$RUN/stream");
    const { code, out } = await paste(block!);
    expect(code).toBe(0);
    expect(out).toMatch(/"status":"queued"/);
    // The stream: events in order, ending with the run's success; then the result.
    expect(out.indexOf("event: plan.updated")).toBeGreaterThan(-1);
    expect(out.indexOf("event: run.succeeded")).toBeGreaterThan(out.indexOf("event: plan.updated"));
    const result = JSON.parse(out.slice(out.lastIndexOf('\n{"runId"') + 1));
    expect(result).toMatchObject({ status: "succeeded" });
    expect(result.result).toContain("17*23 = 391");
    expect(result.result).toContain("(120/8)+2^5 = 47");
  }, 120_000);

  it("analysing a file: upload, a Python analysis and an HTML report, its figures in the answer, the download", async () => {
    const [block] = bashBlocks("### Analysing a file (upload, Python, HTML report, download)");
    const { code, out } = await paste(block!, { KEY: stack.apiKey });
    expect(code).toBe(0);
    expect(out).toContain("event: file.created");
    expect(out).toContain("event: run.succeeded");
    expect(out).toContain('"name":"data-analysis-report.html"');
    const report = await readFile(path.join(dir, "data-analysis-report.html"), "utf8");
    expect(report).toMatch(/<html/i);
    expect(report).toContain("450");
    // The answer carries the figures the analysis printed: amount's total and the sum by region.
    const runId =
      /"runId":"(run_[^"]+)"/.exec(out.slice(out.indexOf("event: run.succeeded")))?.[1] ?? (await api("/v1/runs?limit=1")).runs[0].runId;
    const run = await api(`/v1/runs/${runId}`);
    expect(run.result).toContain("sales.csv: 5 rows, 3 columns");
    expect(run.result).toMatch(/\| amount \| 450\.00 \|/);
  }, 180_000);

  it("from a spreadsheet to slides: a workbook uploaded, the report and the deck written live, downloaded", async () => {
    const [block] = bashBlocks("### From a spreadsheet to slides");
    // Pasted in the project folder, as the README says: its packages are what `require` finds.
    const { code, out } = await paste(block!, { KEY: stack.apiKey, NODE_PATH: path.resolve("node_modules") });
    expect(code, out).toBe(0);
    // `uniq -c` counts each run of the same event: the runs of one type add up.
    const counted = (type: string) =>
      [...out.matchAll(/^\s*(\d+) event: (\S+)$/gm)].filter((m) => m[2] === type).reduce((sum, m) => sum + Number(m[1]), 0);
    expect(counted("code")).toBeGreaterThanOrEqual(2);
    expect(counted("report.delta")).toBeGreaterThanOrEqual(1);
    expect(out.indexOf("event: report.delta")).toBeLessThan(out.lastIndexOf("event: file.created"));
    expect(out).toMatch(/event: run\.succeeded\s*$/m);
    const html = await readFile(path.join(dir, "data-analysis-report.html"), "utf8");
    expect(html).toMatch(/<img alt="amount by region" src="data:image\/svg\+xml;base64,/);
    const pptx = await readFile(path.join(dir, "data-analysis-report.pptx"));
    expect(pptx.subarray(0, 2).toString()).toBe("PK");
    expect(await readFile(path.join(dir, "data-analysis-report.slides.html"), "utf8")).toContain('<section class="slide');
  }, 240_000);

  it("an AG-UI HttpAgent: its run pauses for a write, the next run approves it through resume, the answer comes", async () => {
    const block = bashBlocks("### Agent protocols: AG-UI").find((b) => b.includes("HttpAgent"));
    // Pasted in the project folder, as the README says: its packages are what `require` finds.
    const { code, out } = await paste(block!, { KEY: stack.apiKey, NODE_PATH: path.resolve("node_modules") });
    expect(code, out).toBe(0);
    expect(out).toMatch(/paused: \[\s*'Run write_artifact/);
    expect(out).toContain("17*23 = 391");
    expect(out).toContain("Files: report.md");
  }, 120_000);

  it("approving a write: pasted as one block, it waits for the question and approves", async () => {
    const [block] = bashBlocks("### Approving a write");
    const { code, out } = await paste(block!, { KEY: stack.apiKey });
    expect(code).toBe(0);
    const runId = /"runId":"(run_[^"]+)"/.exec(out)![1]!;
    expect(out).toMatch(/"status":"awaiting_input"/);
    await expect.poll(async () => (await api(`/v1/runs/${runId}`)).status, { timeout: 60_000, interval: 500 }).toBe("succeeded");
    const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
    expect(events.filter((e: any) => e.type === "interrupt.resolved").map((e: any) => e.data.decision)).toEqual(["approve"]);
    expect((await api(`/v1/runs/${runId}`)).files.map((f: any) => f.name)).toContain("report.md");
  }, 120_000);
});
