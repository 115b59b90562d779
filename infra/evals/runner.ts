/**
 * Runs a dataset's cases against a Stepwise API through the typed client: uploads the case's files,
 * saves its agent, submits the run, answers its pauses as the case says, waits for the end, then
 * checks the answer and the tool calls. A case that cannot run fails with the reason; the others go on.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { StepwiseClient } from "../../shared/apiClient/client.js";
import type { RunView } from "../../shared/contracts/responses.js";
import { TERMINAL_STATUSES } from "../../shared/contracts/terminal.js";
import { type CheckResult, checkAnswer } from "./checks.js";
import type { Dataset, EvalCase } from "./dataset.js";
import type { Judge } from "./judge.js";
import type { CaseResult } from "./report.js";
import { type ActualCall, scoreTrajectory } from "./trajectory.js";

export interface RunnerOptions {
  client: StepwiseClient;
  /** Where the cases' files are read from (the dataset's folder). */
  datasetDir: string;
  judge?: Judge;
  /** The saved agent every case runs as, unless it names its own: the agent under test. */
  agent?: string;
  /** How long one case may take before its run is cancelled. */
  timeoutMs: number;
  /** Cases run at once. */
  concurrency: number;
  /** Told as each case ends (progress lines). */
  onCase?: (result: CaseResult) => void;
}

const POLL_MS = 250;

/** Every case's result, and a failing row per dataset problem, in the dataset's line order. */
export async function runDataset(dataset: Dataset, options: RunnerOptions): Promise<CaseResult[]> {
  const results: CaseResult[] = dataset.problems.map((p) => ({
    id: `line ${p.line}`,
    line: p.line,
    input: "",
    passed: false,
    score: 0,
    reasons: [`line ${p.line} does not parse: ${p.message}`],
    checks: [],
    toolCalls: [],
    tokens: 0,
  }));
  const queue = [...dataset.cases];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const result = await runCase(next, options);
      options.onCase?.(result);
      results.push(result);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  return results.sort((a, b) => a.line - b.line);
}

export async function runCase(evalCase: EvalCase, options: RunnerOptions): Promise<CaseResult> {
  const base = { id: evalCase.id, line: evalCase.line, input: evalCase.input, toolCalls: [] as ActualCall[], tokens: 0 };
  const startedAt = Date.now();
  let runId: string | undefined;
  try {
    const { client } = options;
    const files = await Promise.all((evalCase.files ?? []).map((file) => upload(client, options.datasetDir, file)));
    const agent = await agentOf(client, evalCase.agent ?? options.agent);
    const created = await client.createRun({
      input: evalCase.input,
      ...(evalCase.mode ? { mode: evalCase.mode } : {}),
      ...(files.length > 0 ? { files } : {}),
      ...(agent ? { agent } : {}),
      ...(evalCase.instructions ? { instructions: evalCase.instructions } : {}),
      ...(evalCase.approval ? { approval: evalCase.approval } : {}),
      metadata: { eval: evalCase.id.slice(0, 512) },
    });
    runId = created.runId;
    const run = await waitForEnd(client, runId, evalCase, startedAt + options.timeoutMs);
    const toolCalls = await toolCallsOf(client, runId);
    const checks = await checksOf(evalCase, run, toolCalls, options.judge);
    const failed = checks.filter((c) => !c.passed);
    return {
      ...base,
      runId,
      status: run.status,
      answer: run.result ?? undefined,
      toolCalls,
      checks,
      passed: failed.length === 0,
      score: round(checks.reduce((sum, c) => sum + c.score, 0) / Math.max(1, checks.length)),
      reasons: failed.map((c) => c.reason ?? c.check),
      tokens: run.usage.promptTokens + run.usage.completionTokens + checks.reduce((sum, c) => sum + (c.tokens ?? 0), 0),
      costUsd: run.estimatedCostUsd,
      latencyMs: run.endedAt ? Date.parse(run.endedAt) - Date.parse(run.createdAt) : Date.now() - startedAt,
    };
  } catch (error) {
    return {
      ...base,
      ...(runId ? { runId } : {}),
      passed: false,
      score: 0,
      reasons: [(error as Error).message],
      checks: [],
      latencyMs: Date.now() - startedAt,
    };
  }
}

async function checksOf(evalCase: EvalCase, run: RunView, toolCalls: ActualCall[], judge: Judge | undefined): Promise<CheckResult[]> {
  const { expect } = evalCase;
  const statusOk = run.status === expect.status;
  const why = run.error ? `: ${run.error.message}` : "";
  const checks: CheckResult[] = [
    statusOk
      ? { check: `status ${expect.status}`, passed: true, score: 1 }
      : { check: `status ${expect.status}`, passed: false, score: 0, reason: `the run ended ${run.status}, not ${expect.status}${why}` },
  ];
  checks.push(...(await checkAnswer(expect, { input: evalCase.input, answer: run.result ?? "" }, judge)));
  if (expect.trajectory) {
    const { score, passed, reasons } = scoreTrajectory(expect.trajectory, toolCalls);
    const check = `trajectory (${expect.trajectory.match})`;
    checks.push({
      check,
      passed,
      score: round(score),
      ...(passed ? {} : { reason: `${check} scored ${round(score)}: ${reasons.join("; ")}` }),
    });
  }
  return checks;
}

/** Polls the run until it ends, deciding each pause with the case's next decision; past the deadline, cancels it. */
async function waitForEnd(client: StepwiseClient, runId: string, evalCase: EvalCase, deadline: number): Promise<RunView> {
  const decisions = [...(evalCase.decisions ?? [])];
  const decided = new Set<string>();
  for (;;) {
    const run = await client.getRun(runId);
    if (TERMINAL_STATUSES.has(run.status)) return run;
    for (const pending of run.pendingInterrupts.filter((i) => !decided.has(i.interruptId))) {
      const decision = decisions.shift();
      if (!decision) {
        await client.cancelRun(runId).catch(() => undefined);
        throw new Error(`the run paused (${pending.kind}: ${pending.summary}) and the case has no decision left for it`);
      }
      await client.resolveInterrupt(runId, pending.interruptId, decision);
      decided.add(pending.interruptId);
    }
    if (Date.now() > deadline) {
      await client.cancelRun(runId).catch(() => undefined);
      throw new Error(`the run did not end in time (status ${run.status}); it was cancelled`);
    }
    await delay(POLL_MS);
  }
}

/** The tool calls the run made, in the order of its event log. */
async function toolCallsOf(client: StepwiseClient, runId: string): Promise<ActualCall[]> {
  const calls: ActualCall[] = [];
  for (let after = 0; ; ) {
    const page = await client.listEvents(runId, { after, limit: 500 });
    for (const event of page.events)
      if (event.type === "tool.called") calls.push({ tool: event.data.tool, arguments: event.data.arguments });
    if (page.events.length === 0 || page.next.after === after) return calls;
    after = page.next.after;
  }
}

async function upload(client: StepwiseClient, datasetDir: string, file: string): Promise<string> {
  const bytes = await readFile(path.resolve(datasetDir, file)).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`the file ${file} cannot be read: ${error.code ?? error.message}`);
  });
  return (await client.uploadFile(path.basename(file), new Uint8Array(bytes))).fileId;
}

/** The agent a run names: a reference as it is, or a configuration saved first (a new version when it changed). */
async function agentOf(client: StepwiseClient, agent: EvalCase["agent"] | undefined): Promise<string | undefined> {
  if (agent === undefined || typeof agent === "string") return agent;
  const { name, ...config } = agent;
  const saved = await client.saveAgent(name, config);
  return `${saved.name}@${saved.version}`;
}

const round = (n: number) => Math.round(n * 1000) / 1000;
