import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventPage } from "../../shared/apiClient/client.js";
import { Client } from "../support/client.js";
import { stepwise } from "../support/inProcessCli.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * The work tools through the whole local stack with the offline model: a plan_solve run analyses
 * an uploaded CSV in the Python sandbox (the sandbox function behind the local Lambda Invoke API)
 * and writes an HTML report; code that never ends is stopped and the run goes on; a file over
 * DynamoDB's 400 KB item limit written by a tool survives the run.
 */
let stack: RunningStack;
let main: Client;

const SALES = "region,month,amount\nnorth,jan,120.5\nsouth,jan,80\nnorth,feb,99.5\nsouth,feb,100\neast,feb,50\n";

beforeAll(async () => {
  // The endless loop waits out the whole limit; the other runs' code takes well under a second of it.
  stack = await startStack({ SANDBOX_TIMEOUT_MS: "3000" }, []);
  main = new Client(stack.url, stack.apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

async function upload(name: string, body: string, type: string) {
  const res = await fetch(`${stack.url}/v1/files?name=${name}`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": type },
    body,
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { fileId: string }).fileId;
}

async function download(runId: string, name: string) {
  const res = await fetch(`${stack.url}/v1/runs/${runId}/files/${encodeURIComponent(name)}`, {
    headers: { authorization: `Bearer ${stack.apiKey}` },
    redirect: "manual",
  });
  expect(res.status).toBe(302);
  const object = await fetch(res.headers.get("location")!);
  expect(object.status).toBe(200);
  return { type: object.headers.get("content-type"), text: await object.text() };
}

async function events(runId: string) {
  return (await main.request<EventPage>("GET", `/v1/runs/${runId}/events?limit=500`)).body.events as any[];
}

describe("work tools in runs", { timeout: 240_000 }, () => {
  it("plan_solve: analyses the uploaded CSV in Python with the right figures and writes an HTML report", async () => {
    const fileId = await upload("sales.csv", SALES, "text/csv");
    const { runId } = await main.submit({
      input: "Analyse the attached CSV and write an HTML report of the totals",
      mode: "plan_solve",
      files: [fileId],
    });
    const run = await main.waitFor(runId, undefined, 200_000);
    expect(run.status).toBe("succeeded");

    const log = await events(runId);
    const code = log.find((e) => e.type === "tool.result" && e.data.tool === "run_code");
    expect(code.data.ok).toBe(true);
    // The code, then its output, streamed as code events between the call and its result.
    const called = log.find((e) => e.type === "tool.called" && e.data.callId === code.data.callId && e.data.tool === "run_code");
    const shown = log.filter((e) => e.type === "code" && e.data.callId === code.data.callId && e.data.taskId === code.data.taskId);
    expect(shown.map((e) => e.data.part)).toEqual(["source", "output"]);
    expect(shown[0].data.text).toBe(called.data.arguments.code);
    expect(shown[1].data).toMatchObject({ ok: true, text: code.data.output });
    expect(called.seq).toBeLessThan(shown[0].seq);
    expect(shown[1].seq).toBeLessThan(code.seq);
    expect(code.data.output).toContain("### sales.csv: 5 rows, 3 columns (region, month, amount)");
    expect(code.data.output).toContain("| amount | 450.00 | 90.00 | 50.00 | 120.50 |");
    expect(code.data.output).toMatch(/\| north \| 220\.00 \|\n\| south \| 180\.00 \|\n\| east \| 50\.00 \|/);

    const names = run.files.map((f: any) => f.name);
    expect(names).toEqual(expect.arrayContaining(["sales.csv", "sales-amount-by-region.csv"]));
    const report = run.files.find((f: any) => f.name.endsWith(".html"))!;
    expect(report).toMatchObject({ contentType: "text/html" });
    const html = await download(runId, report.name);
    expect(html.type).toBe("text/html");
    expect(html.text).toMatch(/<td>north<\/td>\s*<td>220.00<\/td>/);
    expect(html.text).not.toMatch(/<script/i);
    expect((await download(runId, "sales-amount-by-region.csv")).text).toBe(
      "region,total_amount\r\neast,50.0\r\nnorth,220.0\r\nsouth,180.0\r\n",
    );

    // The report was written live: its text arrived as report.delta events before its file.created.
    const reportCreated = log.find((e) => e.type === "file.created" && e.data.name === report.name);
    const deltas = log.filter((e) => e.type === "report.delta" && e.data.name === report.name);
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((e) => e.seq < reportCreated.seq && e.data.format === "html")).toBe(true);
    expect(deltas.map((e) => e.data.text).join("")).toMatch(/\| north \| 220\.00 \|/);

    // Watchers hear of each file with its size and where to download it; the answer names the files.
    const created = log.filter((e) => e.type === "file.created").map((e) => e.data);
    expect(created).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: report.name,
          contentType: "text/html",
          bytes: report.bytes,
          download: `${stack.url}/v1/runs/${runId}/files/${encodeURIComponent(report.name)}`,
        }),
        expect.objectContaining({ name: "sales-amount-by-region.csv" }),
      ]),
    );
    expect(run.result).toContain(report.name);
  });

  it("an endless loop is stopped at the time limit, the error is the tool's output, and the run goes on", async () => {
    const { runId } = await main.submit({
      input: "Run this Python:\n```python\nprint('counting', flush=True)\nwhile True:\n    pass\n```",
      mode: "react",
    });
    const run = await main.waitFor(runId, undefined, 200_000);
    expect(run.status).toBe("succeeded");
    const result = (await events(runId)).find((e) => e.type === "tool.result" && e.data.tool === "run_code");
    expect(result.data.output).toMatch(/counting[\s\S]*TimeoutError: the code ran for more than 3 s and was stopped/);
    expect(run.result).toMatch(/TimeoutError/);
  });

  it("a file over 400 KB written by the code survives the run", async () => {
    const code = "with open('output/big.txt', 'w') as f:\n    for i in range(60000):\n        f.write(f'{i:09d}\\n')\nprint('written')";
    const { runId } = await main.submit({ input: `Run this Python:\n\`\`\`python\n${code}\n\`\`\``, mode: "react" });
    const run = await main.waitFor(runId, undefined, 200_000);
    expect(run.status).toBe("succeeded");
    const big = run.files.find((f: any) => f.name === "big.txt")!;
    expect(big.bytes).toBe(600_000);
    const { text } = await download(runId, "big.txt");
    expect(text.length).toBe(600_000);
    expect(text.slice(-10)).toBe("000059999\n");
  });
});

/** The `stepwise` command against this stack, run in this process (test/support/inProcessCli.ts). */
const cli = (args: string[]) => stepwise([...args, "--url", stack.url, "--api-key", stack.apiKey]);

describe("files on the command line", { timeout: 240_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), "stepwise-cli-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("run --file uploads, files lists with download links, get carries them", async () => {
    const csv = path.join(dir, "sales.csv");
    writeFileSync(csv, SALES);
    const run = await cli(["run", "Analyse the attached CSV", "--mode", "react", "--file", csv]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stderr).toMatch(/Uploaded sales\.csv \(\d+ bytes\) as file_/);
    // The answer's Markdown table, drawn for the terminal: the figures are in its amount row.
    expect(run.stdout).toMatch(/amount\s*│\s*450\.00\s*│\s*90\.00\s*│\s*50\.00\s*│\s*120\.50\s*│/);
    const runId = /Run (run_[A-Za-z0-9_-]+) submitted/.exec(run.stdout)![1]!;

    const files = await cli(["files", runId]);
    expect(files.code).toBe(0);
    // Each line's link is a short-lived one that opens without the key.
    const line = files.stdout.split("\n").find((l) => l.startsWith("sales.csv\t"));
    expect(line).toMatch(new RegExp(`^sales\\.csv\ttext/csv\t${SALES.length} bytes\thttp`));
    const link = await fetch(line!.split("\t")[3]!);
    expect(link.status).toBe(200);
    expect(await link.text()).toBe(SALES);
    expect(files.stdout).toContain("sales-amount-by-region.csv\ttext/csv");

    const got = await cli(["get", runId]);
    const view = JSON.parse(got.stdout);
    expect(view.files.find((f: any) => f.name === "sales.csv").download).toBe(`${stack.url}/v1/runs/${runId}/files/sales.csv`);
  });
});
