// Request-driven use of the work tools (run_code, write_report, deep_search), so `npm start`
// shows them without a model key: "analyse the attached CSV" runs Python over the run's CSV files,
// a fenced ```python block is run as given, and an analysis that asks for a report (or any request
// for an HTML report) ends with write_report in HTML.

import {
  assistantToolCalls,
  cut,
  isFailure,
  labelledText,
  listedFiles,
  oneLine,
  taskOf,
  toolResultsSinceLastUser,
} from "./conversation.js";
import { type ChatMessage, callTools, type Decision, say, type ToolSpec } from "./types.js";

const ANALYSIS = /\banaly[sz]/i;
const DATA = /\b(csv|xlsx?|spreadsheets?|workbooks?|files?|data|attached|upload(ed)?)\b/i;
const REPORT = /\breport\b/i;
/** The request wants slides too: write_report in pptx as well, with a chart of the analysis. */
const SLIDES = /\b(slides?|slide deck|deck|pptx|powerpoint|presentation)\b/i;
/** Files the analysis reads: CSVs, and workbooks (run_code shows each sheet as a CSV beside them). */
const TABLES = /\.(csv|xlsx?)$/i;

/** The request asks to analyse its files (and maybe to report on them). */
const wantsAnalysis = (request: string) => ANALYSIS.test(request) && DATA.test(request);
const wantsHtmlReport = (text: string) =>
  /\bwrite_report\b/.test(text) || (REPORT.test(text) && (/\bhtml\b/i.test(text) || wantsAnalysis(text)));

/**
 * Plan steps for an analysis request, or undefined to plan as usual: only when the executors have
 * run_code (the planner's prompt lists it) and, for an analysis, a CSV file of the run is named there.
 */
export function workSteps(
  request: string,
  team: ReadonlySet<string>,
  files: readonly string[],
  text = request,
): Array<Record<string, unknown>> | undefined {
  if (!team.has("run_code")) return undefined;
  const csvs = files.filter((name) => TABLES.test(name));
  const code = pythonBlock(request);
  // Several Python blocks are independent programs: one task each, run in parallel by the step.
  const blocks = pythonBlocks(text);
  if (blocks.length > 1)
    return [
      {
        title: "Run the Python programs",
        tasks: blocks.map((_, i) => `Run the request's Python block ${i + 1} with run_code`),
        done_when: "Each program has run.",
      },
    ];
  if (!code && !(wantsAnalysis(request) && csvs.length > 0)) return undefined;
  const steps: Array<Record<string, unknown>> = [
    {
      title: "Analyse the data",
      tasks: [code ? "Run the Python code of the request with run_code" : `Analyse ${csvs.join(", ")} in Python with run_code`],
      done_when: "The analysis printed its figures.",
    },
  ];
  if (SLIDES.test(request) && team.has("write_report")) {
    steps.push({
      title: "Write the report and slides",
      tasks: ["Write an HTML report and slides (pptx) of the analysis, with a chart, with write_report"],
      done_when: "The HTML report and the deck are files of the run.",
    });
  } else if (REPORT.test(request) && team.has("write_report")) {
    steps.push({
      title: "Write the report",
      tasks: ["Write an HTML report of the analysis with write_report"],
      done_when: "The HTML report is a file of the run.",
    });
  }
  return steps;
}

/** The executor's (or ReAct agent's) move when a work tool fits, else undefined. */
export function workMove(
  messages: readonly ChatMessage[],
  offered: ReadonlySet<string>,
  tools?: readonly ToolSpec[],
): Decision | undefined {
  const { userText, task, request } = taskOf(messages);
  // An executor does its own task only (the plan has a step for the report); a ReAct agent does the whole request.
  const goal = labelledText(userText, "Your task:") === undefined ? request : task;
  const results = toolResultsSinceLastUser(messages);
  const lastResult = results.at(-1);
  const called = assistantToolCalls(messages).map((c) => c.name);

  if (lastResult !== undefined) {
    const last = called.at(-1);
    if (last === "run_code") {
      const output = lastResult.replace(/^stdout:\n/, "");
      // With pandas, the frame the first call loaded is plotted by the next, in the same interpreter.
      const loaded = called.filter((name) => name === "run_code").length === 1 && hasPandas(tools) && wantsAnalysis(goal);
      if (loaded && !isFailure(output)) return callTools([{ name: "run_code", arguments: { code: PLOT_CODE } }]);
      // A single agent that was asked for a report writes it from what the code printed.
      if (!isFailure(output) && wantsHtmlReport(goal) && offered.has("write_report") && !called.includes("write_report")) {
        return callTools(reportCalls(request, goal, output, listedFiles(messages)));
      }
      return say(`${isFailure(output) ? "The code failed" : "Analysis done"}:\n${output.trim()}`);
    }
    if (last === "write_report") return say(results.map((r) => r.trim()).join("\n"));
    return undefined;
  }

  const block = /\bPython block (\d+)\b/.exec(task);
  const code = block ? pythonBlocks(userText)[Number(block[1]) - 1] : (pythonBlock(task) ?? pythonBlock(request));
  if (code && offered.has("run_code") && !wantsHtmlReport(task)) return callTools([{ name: "run_code", arguments: { code } }]);
  if (wantsAnalysis(task) && offered.has("run_code")) {
    const csvs = listedFiles(messages).filter((name) => TABLES.test(name));
    const named = csvs.filter((name) => task.includes(name) || request.includes(name));
    const files = named.length ? named : csvs;
    if (files.length === 0)
      return say(
        "There is no CSV file or spreadsheet in this run to analyse. Upload one (POST /v1/files) and pass its id in the run's files.",
      );
    const code = hasPandas(tools) ? pandasLoadCode(files[0] ?? "") : analysisCode(files);
    return callTools([{ name: "run_code", arguments: { code, files } }]);
  }
  if (wantsHtmlReport(task) && offered.has("write_report")) {
    // Earlier results may span paragraphs (tables): take everything up to the task line.
    const prior = /Results so far:\s*\n([\s\S]*?)\n\s*Your task:/.exec(userText)?.[1] ?? "";
    return callTools(reportCalls(request, task, prior || task, listedFiles(messages)));
  }
  return undefined;
}

/**
 * The report the request asks for, written live from the findings (the writer's model call streams
 * it): in HTML, and as slides too when the task asks, each with a chart of a table the analysis
 * wrote (`<name>-<value>-by-<key>.csv`, listed among the run's files).
 */
function reportCalls(request: string, task: string, findings: string, files: readonly string[]): Decision["calls"] {
  const title = wantsAnalysis(request) ? "Data analysis report" : `Report: ${cut(oneLine(request).replace(/[.!?]+$/, ""), 60)}`;
  const charts = files.flatMap((name) => {
    const table = /-([\w]+)-by-([\w]+)\.csv$/.exec(name);
    if (!table) return [];
    const [, value, key] = table;
    return [
      {
        title: `${value} by ${key}`,
        data: name,
        spec: {
          mark: "bar",
          encoding: {
            x: { field: key, type: "nominal", sort: "-y" },
            y: { field: `total_${value}`, type: "quantitative", title: `total ${value}` },
          },
        },
      },
    ];
  });
  const report = { title, task: request.trim(), notes: findings.trim(), ...(charts.length ? { charts } : {}) };
  const calls: Decision["calls"] = [{ name: "write_report", arguments: { ...report, format: "html" } }];
  if (SLIDES.test(task)) calls.push({ name: "write_report", arguments: { ...report, format: "pptx" } });
  return calls;
}

/** run_code's description names pandas (the runtime has the data libraries), as the offline model reads it from its request. */
function hasPandas(tools: readonly ToolSpec[] | undefined): boolean {
  const description = tools?.find((tool) => tool.function?.name === "run_code")?.function?.description ?? "";
  return /\bpandas\b/.test(description) && !/\bno pandas\b/.test(description);
}

/** The first call with pandas: the table into a frame, its shape and a summary (a workbook's first sheet). */
function pandasLoadCode(file: string): string {
  const path = /\.xlsx?$/i.test(file)
    ? `sorted(glob.glob(${JSON.stringify(`files/${file.replace(/\.xlsx?$/i, "")}.*.csv`)}))[0]`
    : JSON.stringify(`files/${file}`);
  return `import glob
import pandas as pd

df = pd.read_csv(${path})
print(f"{len(df)} rows, {len(df.columns)} columns: {', '.join(df.columns)}")
print(df.describe().round(2).to_string())`;
}

/** The next call: the frame loaded before, totalled by its first text column and drawn as bars. */
const PLOT_CODE = `import matplotlib.pyplot as plt

key = df.select_dtypes(exclude="number").columns[0]
value = df.select_dtypes(include="number").columns[0]
totals = df.groupby(key)[value].sum().sort_values(ascending=False)
print(f"{value} by {key}:")
print(totals.to_string())
totals.plot(kind="bar", title=f"{value} by {key}")
plt.ylabel(value)
plt.tight_layout()
plt.savefig("output/chart.png")`;

/** The first fenced ```python block of a text. */
function pythonBlock(text: string): string | undefined {
  return pythonBlocks(text)[0];
}

/** Every fenced Python block of the text, in order. */
function pythonBlocks(text: string): string[] {
  return [...text.matchAll(/```(?:python|py)\s*\n([\s\S]*?)```/gi)].flatMap((match) => match[1]?.trimEnd() || []);
}

/**
 * A general first look at CSV files (a workbook's sheets are CSV files beside it): rows and columns, sum/mean/min/max of every numeric column, and
 * the first numeric column totalled by the first text column (also written to output/ as a CSV).
 */
function analysisCode(files: string[]): string {
  return `import csv, glob, statistics

def number(value):
    try:
        return float(value.replace(",", "")) if value.strip() else None
    except ValueError:
        return None

def fmt(value):
    return f"{value:,.2f}"

def tables(names):
    for name in names:
        if name.lower().endswith((".xlsx", ".xls")):
            # Each sheet of a workbook is a CSV beside it: files/<name without .xlsx or .xls>.<sheet>.csv
            yield from sorted(path[len("files/"):] for path in glob.glob(f"files/{glob.escape(name.rsplit('.', 1)[0])}.*.csv"))
        else:
            yield name

for name in tables(${JSON.stringify(files)}):
    with open(f"files/{name}", newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    columns = list(rows[0].keys()) if rows else []
    numeric = [c for c in columns if any(number(r[c] or "") is not None for r in rows) and all(number(r[c] or "") is not None for r in rows if (r[c] or "").strip())]
    text = [c for c in columns if c not in numeric]
    print(f"### {name}: {len(rows)} rows, {len(columns)} columns ({', '.join(columns)})")
    if numeric:
        print()
        print("| column | sum | mean | min | max |")
        print("|---|---|---|---|---|")
        for c in numeric:
            values = [number(r[c]) for r in rows if number(r[c] or "") is not None]
            print(f"| {c} | {fmt(sum(values))} | {fmt(statistics.mean(values))} | {fmt(min(values))} | {fmt(max(values))} |")
    if text and numeric:
        key, value = text[0], numeric[0]
        totals = {}
        for r in rows:
            totals[r[key]] = totals.get(r[key], 0.0) + (number(r[value] or "") or 0.0)
        print()
        print(f"{value} by {key}:")
        print()
        print(f"| {key} | total {value} |")
        print("|---|---|")
        for k, v in sorted(totals.items(), key=lambda kv: -kv[1]):
            print(f"| {k} | {fmt(v)} |")
        stem = name.rsplit(".", 1)[0]
        with open(f"output/{stem}-{value}-by-{key}.csv", "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow([key, f"total_{value}"])
            for k, v in sorted(totals.items()):
                writer.writerow([k, round(v, 2)])
    print()
`;
}
