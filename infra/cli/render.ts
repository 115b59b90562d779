/**
 * Turns a run's events into terminal lines: the plan with its step statuses, tasks, tool calls and
 * results, thoughts (dimmed), interrupts, the answer, files and usage. Pure: it returns lines and
 * the caller writes them, so tests can read them.
 */

import { EMPTY_RUN, endedBlocks, type FoldedRun, foldRun, type StreamedBlock, textSource } from "../../shared/apiClient/runFold.js";
import { timeAgo } from "../../shared/apiClient/timeAgo.js";
import { attemptLine, deliveryHeadline } from "../../shared/apiClient/webhookDeliveries.js";
import type { RunEvaluation } from "../../shared/contracts/evaluation.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { Plan, StepStatus } from "../../shared/contracts/plan.js";
import type { RunList, RunView, WebhookDeliveries } from "../../shared/contracts/responses.js";
import { undoneText } from "../../shared/contracts/undone.js";
import { budgetText } from "../display/budget.js";
import { evaluationText } from "../display/evaluation.js";
import { forkPointText } from "../display/lineage.js";
import { argumentViews } from "../display/toolArguments.js";
import { highlightAnsi } from "./highlight.js";
import { terminalMarkdown } from "./markdown.js";

export interface Palette {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;
const plain = (text: string) => text;

export function palette(color: boolean): Palette {
  return color
    ? {
        bold: sgr(1, 22),
        dim: sgr(2, 22),
        red: sgr(31, 39),
        green: sgr(32, 39),
        yellow: sgr(33, 39),
        cyan: sgr(36, 39),
        magenta: sgr(35, 39),
      }
    : { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain, magenta: plain };
}

/** Colours only on a terminal, and never when NO_COLOR is set to something (https://no-color.org). */
export function useColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR) return false;
  return stream.isTTY === true;
}

const STEP_MARKERS: Record<StepStatus, string> = {
  completed: "[x]",
  in_progress: "[>]",
  not_started: "[ ]",
  blocked: "[!]",
};

export interface RendererOptions {
  color: boolean;
  /** Longest tool argument / result / thought text shown on a line before it is cut (default 300). */
  maxText?: number;
}

/** Keeps what it needs between events: the run's fold, and what of it the terminal shows already. */
export class Renderer {
  readonly c: Palette;
  private readonly maxText: number;
  private shownPlanShape: string | undefined;
  private lastBlank = true;
  /** The run as its events tell it (runFold.ts): its streamed text blocks, answer and files. */
  private run: FoldedRun = EMPTY_RUN;
  /**
   * Streamed answer text and reasoning are shown when their agent moves on or the run does
   * (reasoning collapsed to one line): the characters of each block already on the terminal, by
   * the block's first event.
   */
  private readonly shown = new Map<number, number>();
  /** The last text each task showed, so its completion line does not repeat it. */
  private lastTaskText = new Map<string, string>();

  private readonly color: boolean;

  constructor(options: RendererOptions) {
    this.color = options.color;
    this.c = palette(options.color);
    this.maxText = options.maxText ?? 300;
  }

  /** The lines for one event (none for events not worth a line, e.g. token deltas). */
  event(event: RunEvent): string[] {
    const before = this.run;
    this.run = foldRun(before, event);
    if (this.run === before) return []; // a repeat: shown already
    const ended = endedBlocks(before, this.run);
    if (event.type === "agent.withdrawn") {
      // Its held text is dropped unshown; text already on the terminal is said to be void.
      const shown = ended.some((block) => (this.shown.get(block.startSeq) ?? 0) > 0);
      for (const block of ended) this.shown.delete(block.startSeq);
      return this.tidy(
        shown ? [`  ${this.source(event.data)} ${this.c.yellow("↺ the text above is withdrawn: its reply broke off")}`] : [],
      );
    }
    // Text streamed by an agent is shown when it does something else (or the run moves on), once.
    const held = ended.flatMap((block) => this.unshown(block));
    for (const block of ended) this.shown.delete(block.startSeq);
    if (event.type === "agent.reasoning" || event.type === "agent.delta") return this.tidy(held);
    if (!textSource(event.data)) return this.tidy([...held, ...this.flushAll(), ...this.lines(event)]);
    // A thought after deltas is the text they carried: shown already.
    if (event.type === "agent.thought" && ended.some((block) => block.kind === "text")) return this.tidy(held);
    return this.tidy([...held, ...this.lines(event)]);
  }

  /** Lines for text still waiting to be shown (when the run moves on, and at the end of a stream). */
  flushAll(): string[] {
    return [...this.run.blocks.values()].flatMap((block) => this.unshown(block));
  }

  /** What a block holds that is not on the terminal yet: reasoning collapsed to one dim line, text as it is. */
  private unshown(block: StreamedBlock): string[] {
    const said = block.text.slice(this.shown.get(block.startSeq) ?? 0);
    if (!said) return [];
    this.shown.set(block.startSeq, block.text.length);
    if (block.kind === "text") return this.text(block.source, said);
    const line = `▸ reasoning (${said.length} characters): ${this.cut(oneLine(said)).slice(0, 80)}`;
    return [`  ${this.source(block.source)} ${this.c.dim(line)}`];
  }

  private text(data: { agent: string; taskId?: string }, text: string): string[] {
    if (data.taskId) this.lastTaskText.set(data.taskId, text.trim());
    const lines = terminalMarkdown(text.trim(), palette(false), false);
    const shown = lines.slice(0, 6).map((line) => this.cut(line));
    if (lines.length > 6) shown.push(`… (${lines.length - 6} more lines)`);
    return shown.map((line, i) => `  ${i === 0 ? this.source(data) : " ".repeat(sourceWidth(data))} ${this.c.dim(line)}`);
  }

  /** No blank line twice in a row, nor at the very start, across calls. */
  private tidy(lines: string[]): string[] {
    const out: string[] = [];
    for (const line of lines) {
      const blank = line.trim() === "";
      if (blank && this.lastBlank) continue;
      out.push(line);
      this.lastBlank = blank;
    }
    return out;
  }

  private lines(event: RunEvent): string[] {
    const { c } = this;
    switch (event.type) {
      case "run.started":
        return [c.dim(`Run started (mode ${event.data.mode}).`)];
      case "plan.updated":
        return this.plan(event.data.plan);
      case "task.started": {
        const { taskId, title, stepIndex } = event.data;
        return [`${c.cyan("▶")} ${c.bold(taskId)} started ${c.dim(`(step ${stepIndex + 1})`)}: ${title}`];
      }
      case "task.completed": {
        const { taskId, status, result, files = [], undone } = event.data;
        const ok = status === "succeeded";
        // A task a person left undone is not done, whatever its executor answered.
        const mark = undone?.length ? c.yellow("⊘") : ok ? c.green("✓") : c.red("✗");
        const state = undone?.length ? c.yellow(`not done (${undoneText(undone)})`) : ok ? "done" : c.red("failed");
        // The result is usually the text the task just showed: say it once.
        const said = this.lastTaskText.get(taskId) === result.trim();
        this.lastTaskText.delete(taskId);
        const made = files.length ? c.dim(` (files: ${files.join(", ")})`) : "";
        return [`${mark} ${c.bold(taskId)} ${state}${made}${said ? "" : `: ${this.cut(oneLine(result))}`}`];
      }
      case "agent.thought":
        // Only when no delta carried the text (a model that does not stream).
        return this.text(event.data, event.data.text);
      case "agent.delta":
      case "agent.reasoning":
        return [];
      case "tool.called": {
        const args = json(event.data.arguments);
        const persona = event.data.persona ? ` ${c.dim(`(${event.data.persona})`)}` : "";
        return [
          `  ${this.source(event.data)} ${c.magenta("→")} ${c.bold(event.data.tool)}${persona} ${args.length > 200 ? `${args.slice(0, 199)}…` : args}`,
        ];
      }
      case "tool.result": {
        const { ok, output, tool } = event.data;
        const arrow = ok ? c.magenta("←") : c.red("✗");
        const lines = output.trim().split(/\r?\n/);
        const more = lines.length > 1 ? c.dim(` (+${lines.length - 1} lines)`) : "";
        const text = ok ? this.cut(lines[0] ?? "") : c.red(`${tool}: ${this.cut(lines[0] ?? "")}`);
        return [`  ${this.source(event.data)} ${arrow} ${text}${more}`];
      }
      case "code": {
        // The code as it runs (cut to a few lines); its output is the tool's result that follows.
        if (event.data.part === "output") return [];
        const lines = event.data.text.trimEnd().split(/\r?\n/);
        const more = lines.length > 6 ? [c.dim(`    … (+${lines.length - 6} lines)`)] : [];
        return [
          `  ${this.source(event.data)} ${c.dim(`${event.data.language}:`)}`,
          ...lines.slice(0, 6).map((line) => c.dim(`    ${this.cut(line)}`)),
          ...more,
        ];
      }
      case "report.delta":
      case "report.withdrawn":
        return []; // the report is shown as its file, once saved
      case "model.retrying": {
        const { attempt, retries, reason, waitMs } = event.data;
        return [
          `  ${this.source(event.data)} ${c.yellow(`↻ model call failed (${this.cut(oneLine(reason))}); retry ${attempt} of ${retries} in ${(waitMs / 1000).toFixed(1)} s`)}`,
        ];
      }
      case "agent.withdrawn":
        return [];
      case "search.progress":
        return [`  ${this.source(event.data)} ${c.dim(`search ${event.data.stage}: ${this.cut(oneLine(event.data.detail))}`)}`];
      case "file.created": {
        const { name, bytes, contentType, taskId } = event.data;
        const by = taskId ? `${this.source({ agent: "executor", taskId })} ` : "";
        return [`  ${by}${c.cyan("+")} file ${c.bold(name)} ${c.dim(`(${bytes} bytes, ${contentType})`)}`];
      }
      case "run.resumed":
        return [
          c.dim(
            `Run resumed${event.data.redrive ? " (redriven)" : ""}${event.data.reason ? `: ${this.cut(oneLine(event.data.reason))}` : ""}.`,
          ),
        ];
      case "tool_source.unavailable":
        return [c.yellow(`⚠ tool source ${event.data.source} unavailable: ${this.cut(oneLine(event.data.reason))}`)];
      case "interrupt.opened":
        return this.interrupt(event.data);
      case "interrupt.resolved": {
        const { decision, message, kind } = event.data;
        const what =
          kind === "plan_approval"
            ? "plan"
            : kind === "tool_approval"
              ? "tool call"
              : kind === "tool_failure"
                ? "failed tool call"
                : "question";
        const word: Record<string, string> = {
          approve: c.green("✓ approved"),
          reject: c.red("✗ rejected"),
          edit: c.yellow("✎ edited"),
          answer: c.green("✓ answered"),
          retry: c.yellow("↻ retried"),
          skip: c.yellow("↷ skipped"),
          fail: c.red("✗ failed"),
        };
        return [`${word[decision] ?? decision} (${what})${message ? `: ${this.cut(oneLine(message))}` : ""}`];
      }
      case "run.succeeded":
        // The files follow in summary(), with their sizes.
        return ["", c.bold(c.green("Answer:")), ...terminalMarkdown(event.data.result, c, this.color), ""];
      case "run.failed":
        return ["", c.red(c.bold(`✗ The run failed (${event.data.error.code}): ${event.data.error.message}`))];
      case "run.timed_out":
        return ["", c.red(c.bold(`✗ The run timed out: ${event.data.reason}`))];
      case "run.cancelled":
        return ["", c.yellow(c.bold(`✗ The run was cancelled: ${event.data.reason}`))];
      case "run.interrupted":
        return ["", c.yellow(c.bold(`✗ The run was interrupted: ${event.data.reason}`)), c.dim("  What it finished stays in the session.")];
      case "guardrail.decided": {
        const { check, kind, verdict, reason, stage, tool, mode } = event.data;
        if (verdict === "pass") return [];
        const where = tool ? `${stage} of ${tool}` : stage;
        const marks = {
          block: c.red("⛔ blocked"),
          deny: c.red("⛔ denied"),
          require_approval: c.yellow("✋ approval asked"),
          redact: c.yellow("✎ redacted"),
          warn: c.yellow("⚠ warned"),
        };
        const what = `${kind === "policy" ? "policy" : "guardrail"} ${check}, ${where}${mode === "log_only" ? ", log only" : ""}`;
        return [`  ${marks[verdict]} ${c.dim(`(${what})`)}${reason ? `: ${this.cut(oneLine(reason))}` : ""}`];
      }
      case "run.blocked":
        return ["", c.red(c.bold(`⛔ The run was blocked by the guardrail ${event.data.check}: ${event.data.reason}`))];
      case "eval.scored":
        return this.evaluation(event.data);
      case "run.budget_exhausted":
        return ["", c.yellow(c.bold(`■ ${event.data.stopReason}`)), ...terminalMarkdown(event.data.result, c, this.color), ""];
      case "run.queued_behind":
        return [c.dim(`… waiting for run ${event.data.runId} to end (place ${event.data.position} in the session's queue)`)];
      default: {
        const unknown = event as { type: string; data?: unknown };
        return [c.dim(`${unknown.type} ${this.cut(json(unknown.data))}`)];
      }
    }
  }

  /** The plan with a marker per step; tasks are listed when the plan is new or its shape changed. */
  plan(plan: Plan): string[] {
    const { c } = this;
    const shape = JSON.stringify([plan.title, plan.steps.map((s) => [s.title, s.tasks])]);
    const full = shape !== this.shownPlanShape;
    this.shownPlanShape = shape;
    const lines = ["", `${c.bold("Plan:")} ${plan.title}${plan.finished ? c.green(" (finished)") : ""}`];
    plan.steps.forEach((step, i) => {
      const marker = STEP_MARKERS[step.status] ?? `[${step.status}]`;
      const painted =
        step.status === "completed"
          ? c.green(marker)
          : step.status === "in_progress"
            ? c.cyan(marker)
            : step.status === "blocked"
              ? c.red(marker)
              : marker;
      lines.push(
        `  ${painted} ${i + 1}. ${step.title}${step.undone ? c.yellow(` (${step.undone} task(s) not done: the user declined a tool call)`) : ""}`,
      );
      if (full) for (const task of step.tasks) lines.push(c.dim(`         - ${task}`));
      if (step.notes) lines.push(c.dim(`         notes: ${this.cut(oneLine(step.notes))}`));
      if (step.verdict) {
        const said = `done when ${step.verdict.met ? (step.undone ? "met as far as it could be" : "met") : "not met"}${step.verdict.reason ? `: ${this.cut(oneLine(step.verdict.reason))}` : ""}`;
        lines.push(`         ${step.verdict.met ? c.green(said) : c.yellow(`${said} (revised, runs again)`)}`);
      }
    });
    lines.push("");
    return lines;
  }

  interrupt(data: Extract<RunEvent, { type: "interrupt.opened" }>["data"]): string[] {
    const { c } = this;
    const head = c.yellow(c.bold("?"));
    switch (data.kind) {
      case "plan_approval":
        return [`${head} ${c.bold("The plan needs your approval.")} ${c.dim(`(${data.interruptId})`)}`];
      case "tool_approval":
        return [
          `${head} ${c.bold(`${data.taskId ? `${data.taskId} wants` : "The agent wants"} to run ${data.toolName ?? "a tool"}`)} ${c.dim(`(${data.interruptId})`)}`,
          ...this.toolArguments(data.arguments),
        ];
      case "ask_user":
        return [`${head} ${c.bold("The agent asks:")} ${data.question ?? data.summary} ${c.dim(`(${data.interruptId})`)}`];
      case "tool_failure":
        return [
          `${head} ${c.bold(`${data.toolName ?? "A tool"} ${data.failure?.reason === "in_doubt" ? "may or may not have run" : "failed"}`)} ${c.dim(`(${data.interruptId})`)}`,
          `  ${c.red(this.cut(oneLine(data.failure?.error ?? data.summary)))}`,
          ...this.toolArguments(data.arguments),
        ];
      default:
        return [`${head} ${c.bold(`Waiting for a person (${data.kind}):`)} ${data.summary} ${c.dim(`(${data.interruptId})`)}`];
    }
  }

  /** Each argument as what it is: code with its line breaks (coloured by language), text, pretty JSON. */
  toolArguments(args: unknown, toolDescription = ""): string[] {
    const { c } = this;
    return argumentViews(args, toolDescription).flatMap((view) => {
      const label = `    ${c.bold(view.name)}${view.kind === "code" && view.language ? c.dim(` (${view.language})`) : ""}:`;
      if (view.kind === "text" && !view.text.includes("\n") && view.text.length <= 100) return [`${label} ${view.text}`];
      const body =
        view.kind === "text" ? view.text : this.color ? highlightAnsi(view.text, view.kind === "json" ? "json" : view.language) : view.text;
      return [label, ...body.split("\n").map((line) => `      ${c.dim("│")} ${line}`)];
    });
  }

  /** After the end: the files with sizes and the usage, from `GET /v1/runs/{id}`. */
  summary(run: RunView): string[] {
    const { c } = this;
    const lines: string[] = [];
    // Files the answer already names are not listed again; a task's files are listed under it.
    const answer = this.run.result || run.result || "";
    const unnamed = run.files.filter((f) => !answer.includes(f.name));
    const listed = (files: typeof unnamed) => files.map((f) => `${f.name} (${f.bytes} bytes)`).join(", ");
    const ofRun =
      run.files.length > 0
        ? listed(unnamed.filter((f) => !f.taskId))
        : (this.run.resultFiles ?? []).filter((f) => !answer.includes(f)).join(", ");
    if (ofRun) lines.push(`${c.bold("Files:")} ${ofRun}`);
    lines.push(...this.lineage(run));
    // By task, in the tasks' order; a task past the view's page of tasks still has its files listed.
    const titles = new Map((run.tasks ?? []).map((task) => [task.taskId, task.title]));
    const writers = new Set([...titles.keys(), ...unnamed.flatMap((f) => (f.taskId ? [f.taskId] : []))]);
    for (const taskId of writers) {
      const own = unnamed.filter((f) => f.taskId === taskId);
      const title = titles.get(taskId);
      if (own.length > 0) lines.push(`${c.bold(`Files of ${taskId}`)}${title ? ` ${c.dim(`(${title})`)}` : ""}: ${listed(own)}`);
    }
    const u = run.usage as Partial<Record<"promptTokens" | "completionTokens" | "llmCalls" | "toolCalls" | "stateTransitions", number>>;
    const parts = [
      u.llmCalls !== undefined ? count(u.llmCalls, "model call") : undefined,
      u.promptTokens !== undefined ? `${u.promptTokens} prompt + ${u.completionTokens ?? 0} completion tokens` : undefined,
      u.toolCalls !== undefined ? count(u.toolCalls, "tool call") : undefined,
      u.stateTransitions !== undefined ? count(u.stateTransitions, "state transition") : undefined,
    ].filter(Boolean);
    if (parts.length > 0) lines.push(c.dim(`Usage: ${parts.join(" · ")}`));
    // Scored after the end: shown here when its event was not on the stream.
    if (run.evaluation && !this.run.evaluation) lines.push(...this.evaluation(run.evaluation));
    if (run.budget) lines.push(c.dim(`Budget: ${budgetText(run.budget)}`));
    return this.tidy(lines);
  }

  /** A fork's parent and a parent's forks (an API older than forks lists none). */
  lineage(run: RunView): string[] {
    const { c } = this;
    const forks = run.forks ?? [];
    return [
      ...(run.forkOf ? [`${c.bold("Forked from")} ${run.forkOf.runId} at ${forkPointText(run.forkOf.at)}`] : []),
      ...(forks.length
        ? [`${c.bold("Forks:")} ${forks.map((f) => `${f.runId} (at ${forkPointText(f.at)}, ${f.status})`).join(", ")}`]
        : []),
    ];
  }

  /** The online eval's scores (or why the run was not scored). */
  private evaluation(evaluation: RunEvaluation): string[] {
    const { c } = this;
    const { headline, judges, passed } = evaluationText(evaluation);
    const color = passed === undefined ? c.yellow : passed ? c.green : c.red;
    return ["", c.bold(color(headline)), ...judges.map((line) => `  ${this.cut(line)}`)];
  }

  /** The outcome from the run record, for a run that ended without a terminal event on the stream. */
  outcome(run: RunView): string[] {
    const { c } = this;
    switch (run.status) {
      case "succeeded":
        return this.tidy(["", c.bold(c.green("Answer:")), ...terminalMarkdown(run.result ?? "", c, this.color), ""]);
      case "failed":
        return this.tidy(["", c.red(c.bold(`✗ The run failed${run.error ? ` (${run.error.code}): ${run.error.message}` : "."}`))]);
      default:
        return this.tidy(["", c.red(c.bold(`✗ The run ended: ${run.status}${run.error ? ` (${run.error.message})` : ""}`))]);
    }
  }

  private source(data: { agent: string; taskId?: string }): string {
    return this.c.dim(`[${data.taskId ?? data.agent}]`);
  }

  private cut(text: string): string {
    return text.length > this.maxText ? `${text.slice(0, this.maxText - 1)}…` : text;
  }
}

function sourceWidth(data: { agent: string; taskId?: string }): number {
  return (data.taskId ?? data.agent).length + 2;
}

function json(value: unknown): string {
  if (value === undefined) return "";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function oneLine(text: string): string {
  return text.trim().replace(/\s*\r?\n\s*/g, " ⏎ ");
}

/** `stepwise webhooks`: the run's webhook, then each delivery with its attempts. */
export function webhookDeliveries(list: WebhookDeliveries, now = Date.now()): string {
  if (!list.webhook) return `Run ${list.runId} has no webhook.\n`;
  const lines = [`Webhook: ${list.webhook.url}${list.webhook.events ? ` (${list.webhook.events.join(", ")})` : ""}`];
  if (list.deliveries.length === 0) lines.push("No deliveries yet: one is sent when the run waits for a person or ends.");
  for (const delivery of list.deliveries) {
    lines.push(`${deliveryHeadline(delivery, now)} [${delivery.deliveryId}]`);
    for (const attempt of delivery.attempts) lines.push(`  ${attempt.at}  ${attemptLine(attempt)}`);
  }
  return `${lines.join("\n")}\n`;
}

/** `stepwise list`: one line per run, newest first; the cost is an estimate, none for a model with no price. */
export function runList(page: RunList, now = Date.now()): string {
  if (page.runs.length === 0) return "No runs.\n";
  const rows = page.runs.map((run) => [
    run.runId,
    run.status,
    run.mode ?? run.requestedMode,
    timeAgo(run.createdAt, now),
    run.estimatedCostUsd === undefined ? "—" : `est. $${run.estimatedCostUsd.toFixed(4)}`,
    // The session's title where this run's turn made it (shorter than most tasks), else the task.
    oneLine(run.title ?? run.input).slice(0, 60),
  ]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join("  "));
  return `${lines.join("\n")}\n${page.nextCursor ? "(more: raise --limit, or filter with --status / --session)\n" : ""}`;
}
