/**
 * `npm run eval -- <dataset.jsonl>`: runs a dataset against the local stack (started here, as
 * `npm start` does) or a deployed API (--url), writes the report as JSON and Markdown (and HTML
 * with --html), prints the table, and exits 1 when any case fails (2 on a usage error).
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { StepwiseClient } from "../../shared/apiClient/client.js";
import { MODEL_ID } from "../offlineModel/protocol.js";
import { startOfflineModel } from "../offlineModel/server.js";
import { parseDataset } from "./dataset.js";
import { type Judge, openAiJudge } from "./judge.js";
import { startLocalStack } from "./localStack.js";
import { compareReports, type EvalReport, htmlReport, markdownReport, summarize } from "./report.js";
import { runDataset } from "./runner.js";

export const USAGE = `Usage: npm run eval -- <dataset.jsonl> [options]
  --url <url>            a deployed Stepwise API (default: start the local stack)
  --api-key <key>        its key (default: STEPWISE_API_KEY)
  --agent <name[@v]>     the saved agent every case runs as, unless the case names one
  --out <path>           the report's path without extension (default: .stepwise/evals/<dataset>-<time>)
  --html                 write an HTML page of the report too
  --compare <report>     an earlier report (.json): show what changed
  --concurrency <n>      cases at once (default 2)
  --timeout-seconds <n>  one case's limit (default 600)
  --judge-url <url>      the judge's OpenAI-compatible endpoint (default: EVAL_JUDGE_BASE_URL, OPENAI_BASE_URL,
                         api.openai.com with OPENAI_API_KEY, else the offline model); key: EVAL_JUDGE_API_KEY or OPENAI_API_KEY
  --judge-model <name>   the judge's model (default: EVAL_JUDGE_MODEL, else gpt-4o-mini)`;

export interface EvalOutcome {
  exitCode: number;
  report?: EvalReport;
  /** The files written. */
  files: string[];
}

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

const defaultIo: Io = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t), env: process.env };

export async function evalCommand(argv: string[], io: Io = defaultIo): Promise<EvalOutcome> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}\n`);
    return { exitCode: 2, files: [] };
  }
  const { values, datasetPath } = args;
  const text = await readFile(datasetPath, "utf8").catch(() => undefined);
  if (text === undefined) {
    io.err(`The dataset ${datasetPath} cannot be read.\n`);
    return { exitCode: 2, files: [] };
  }
  const earlier = values.compare ? await readReport(values.compare, io) : undefined;
  if (earlier === null) return { exitCode: 2, files: [] };
  const dataset = parseDataset(text);
  for (const problem of dataset.problems) io.err(`${datasetPath}:${problem.line}: ${problem.message}\n`);

  const stopping: (() => Promise<void>)[] = [];
  try {
    let target: { url: string; apiKey?: string };
    try {
      target = values.url ? { url: values.url, apiKey: values["api-key"] ?? io.env.STEPWISE_API_KEY } : await localTarget(io, stopping);
    } catch (error) {
      io.err(`${(error as Error).message}\n`);
      return { exitCode: 2, files: [] };
    }
    const { judge, name: judgeName } = await judgeOf(values, io.env, stopping);
    io.err(`Judge: ${judgeName}\n`);
    const startedAt = new Date().toISOString();
    const cases = await runDataset(dataset, {
      client: new StepwiseClient(target.url, target.apiKey),
      datasetDir: path.dirname(path.resolve(datasetPath)),
      judge,
      agent: values.agent,
      timeoutMs: Number(values["timeout-seconds"]) * 1000,
      concurrency: Number(values.concurrency),
      onCase: (c) => io.err(`${c.passed ? "pass" : "FAIL"}  ${c.id}${c.passed ? "" : `: ${c.reasons.join("; ")}`}\n`),
    });
    const report: EvalReport = {
      reportVersion: 1,
      dataset: path.basename(datasetPath),
      target: target.url,
      judge: judgeName,
      startedAt,
      endedAt: new Date().toISOString(),
      summary: summarize(cases),
      cases,
    };
    const comparison = earlier ? compareReports(earlier, report) : undefined;
    const base =
      values.out ??
      path.join(".stepwise", "evals", `${path.basename(datasetPath, path.extname(datasetPath))}-${startedAt.replace(/[:.]/g, "-")}`);
    await mkdir(path.dirname(path.resolve(base)), { recursive: true });
    const markdown = markdownReport(report, comparison);
    const files: [string, string][] = [
      [`${base}.json`, `${JSON.stringify(report, null, 2)}\n`],
      [`${base}.md`, markdown],
      ...(values.html ? [[`${base}.html`, htmlReport(report, comparison)] as [string, string]] : []),
    ];
    for (const [file, content] of files) await writeFile(file, content);
    io.out(`${markdown}\nReport: ${files.map(([file]) => file).join(", ")}\n`);
    return { exitCode: report.summary.failed > 0 ? 1 : 0, report, files: files.map(([file]) => file) };
  } finally {
    for (const stop of stopping.reverse()) await stop();
  }
}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      "api-key": { type: "string" },
      agent: { type: "string" },
      out: { type: "string" },
      html: { type: "boolean", default: false },
      compare: { type: "string" },
      concurrency: { type: "string", default: "2" },
      "timeout-seconds": { type: "string", default: "600" },
      "judge-url": { type: "string" },
      "judge-model": { type: "string" },
    },
  });
  if (positionals.length !== 1)
    throw new Error(positionals.length === 0 ? "Name one dataset (a .jsonl file)." : `One dataset at a time, got ${positionals.length}.`);
  for (const name of ["concurrency", "timeout-seconds"] as const) {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} is a whole number of at least 1, got '${values[name]}'`);
  }
  return { values, datasetPath: positionals[0] as string };
}

async function readReport(file: string, io: Io): Promise<EvalReport | null> {
  try {
    const report = JSON.parse(await readFile(file, "utf8")) as EvalReport;
    if (report.reportVersion !== 1 || !Array.isArray(report.cases)) throw new Error("not an eval report (reportVersion 1)");
    return report;
  } catch (error) {
    io.err(`--compare ${file}: ${(error as Error).message}\n`);
    return null;
  }
}

async function localTarget(io: Io, stopping: (() => Promise<void>)[]): Promise<{ url: string; apiKey: string }> {
  io.err("Starting the local stack…\n");
  const stack = await startLocalStack();
  stopping.push(stack.stop);
  return stack;
}

/** The judge: the configured OpenAI-compatible model, else the offline model (started here); and its name for the report. */
async function judgeOf(
  values: { "judge-url"?: string; "judge-model"?: string },
  env: NodeJS.ProcessEnv,
  stopping: (() => Promise<void>)[],
): Promise<{ judge: Judge; name: string }> {
  const apiKey = env.EVAL_JUDGE_API_KEY || env.OPENAI_API_KEY;
  const baseUrl =
    values["judge-url"] || env.EVAL_JUDGE_BASE_URL || env.OPENAI_BASE_URL || (apiKey ? "https://api.openai.com/v1" : undefined);
  if (baseUrl) {
    const model = values["judge-model"] || env.EVAL_JUDGE_MODEL || "gpt-4o-mini";
    return { judge: openAiJudge({ baseUrl, apiKey, model }), name: `${model} at ${baseUrl}` };
  }
  const offline = await startOfflineModel();
  stopping.push(offline.close);
  return {
    judge: openAiJudge({ baseUrl: offline.url, model: MODEL_ID }),
    name: "the offline model (grades by the phrases a rubric quotes)",
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { exitCode } = await evalCommand(process.argv.slice(2));
  process.exit(exitCode);
}
