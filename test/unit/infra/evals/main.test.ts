import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { evalCommand } from "../../../../infra/evals/main.js";
import { useTempDirs } from "../../../support/tempDirs.js";

const tempDir = useTempDirs();

async function evaluate(args: string[]) {
  const err: string[] = [];
  const out: string[] = [];
  const outcome = await evalCommand(args, { out: (t) => out.push(t), err: (t) => err.push(t), env: {} });
  return { ...outcome, out: out.join(""), err: err.join("") };
}

describe("npm run eval: what it refuses before it starts anything", () => {
  it.each([
    [[], /Name one dataset/],
    [["a.jsonl", "b.jsonl"], /One dataset at a time, got 2/],
    [["a.jsonl", "--concurrency", "0"], /--concurrency is a whole number of at least 1, got '0'/],
    [["a.jsonl", "--timeout-seconds", "soon"], /--timeout-seconds is a whole number/],
    [["a.jsonl", "--frobnicate"], /Unknown option '--frobnicate'/],
  ])("%j: a usage error, exit 2", async (args, message) => {
    const { exitCode, err } = await evaluate(args);
    expect(exitCode).toBe(2);
    expect(err).toMatch(message);
    expect(err).toContain("Usage: npm run eval");
  });

  it("a dataset it cannot read, or an earlier report that is not one: exit 2, no report", async () => {
    const dir = tempDir();
    expect(await evaluate([path.join(dir, "missing.jsonl")])).toMatchObject({ exitCode: 2, files: [] });
    const dataset = path.join(dir, "d.jsonl");
    await writeFile(dataset, '{"input": "x"}\n');
    await writeFile(path.join(dir, "old.json"), '{"cases": []}');
    const { exitCode, err } = await evaluate([dataset, "--url", "http://127.0.0.1:9", "--compare", path.join(dir, "old.json")]);
    expect(exitCode).toBe(2);
    expect(err).toMatch(/old\.json: not an eval report/);
  });

  it("a dataset whose every line is broken: a report row per line naming the problem, exit 1, no run submitted", async () => {
    const dir = tempDir();
    const dataset = path.join(dir, "bad.jsonl");
    await writeFile(dataset, '{"input": \n{"input": "x", "mode": "fast"}\n');
    // The API's address answers nothing: a request to it would fail the case with a connection error.
    const { exitCode, report, err } = await evaluate([dataset, "--url", "http://127.0.0.1:9", "--out", path.join(dir, "r")]);
    expect(exitCode).toBe(1);
    expect(err).toContain(`${dataset}:1: not JSON`);
    expect(report?.cases.map((c) => c.reasons[0])).toEqual([
      expect.stringMatching(/^line 1 does not parse: not JSON/),
      expect.stringMatching(/^line 2 does not parse: mode: /),
    ]);
    expect(JSON.parse(await readFile(path.join(dir, "r.json"), "utf8")).summary).toMatchObject({ cases: 2, failed: 2 });
  });
});
