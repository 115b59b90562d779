import { textStream } from "../agent/deltas.js";
import { fileLines, summarizerPrompt } from "../agent/prompts.js";
import { portsForAgent } from "../agent/savedAgent.js";
import { ScopeJournal } from "../agent/scopeJournal.js";
import { BudgetExhaustedError, withBudget } from "../budget/reservation.js";
import type { Usage } from "../contracts/run.js";
import { AgentError, errorMessage, NotFoundError } from "../errors.js";
import { TextGuard } from "../guardrails/textGuard.js";
import { ContextWindow } from "../memory/context.js";
import { fitText } from "../memory/largeText.js";
import { rememberTurn, sessionHistory } from "../memory/session.js";
import { shareBudget } from "../memory/share.js";
import { logger } from "../observability.js";
import { type FileMeta, namesOfTask } from "../ports/files.js";
import type { StepPorts } from "../ports/index.js";
import type { TaskRecord } from "../ports/tasks.js";
import { ReplayDivergedError } from "../run/replayDivergence.js";

/** "Summarize" reads the run, its task results and files, makes one journaled model call streamed to clients, and writes the session. */
export type SummarizePorts = StepPorts<
  "settings" | "model" | "journal" | "runs" | "tasks" | "files" | "sessions" | "events" | "spend" | "notifyQueue"
>;

/** The share of the prompt budget the task results may take (the rest: instructions, session, answer). */
const RESULTS_SHARE = 0.5;

/**
 * "Summarize" (plan_solve runs; "Finalize" then ends the run): writes the answer from the task results (tool context cleared: the summarizer sees results,
 * not tool chatter). Each result is given whole when they fit the prompt budget together, so the
 * answer can carry the figures the tasks found. The answer streams as agent.delta events of the
 * summarizer before the run ends. If the model fails, a mechanical summary of the steps still answers.
 */
export async function summarize(input: { runId: string }, ports: SummarizePorts): Promise<{ runId: string; files: string[] }> {
  const { runId } = input;
  const [record, tasks, files, journal] = await Promise.all([
    ports.runs.get(runId),
    ports.tasks.list(runId),
    ports.files.list(runId),
    ScopeJournal.load(ports.journal, runId, "summary"),
  ]);
  if (!record) throw new NotFoundError(`run ${runId} not found`);
  const names = files.map((f) => f.name);
  const done = tasks.filter((t) => t.status !== "pending");
  if (done.length > 0 && done.every((t) => t.status === "failed")) {
    // Nothing succeeded: there is no answer to write. The run fails, saying what went wrong.
    throw new AgentError(
      [`All ${done.length} task(s) failed:`, ...done.map((t) => `- ${t.title}: ${(t.result ?? "no result").slice(0, 300)}`)]
        .join("\n")
        .slice(0, 1_900),
      "all_tasks_failed",
    );
  }
  const results = resultLines(done, ports.settings.budgets.contextTokens * 4 * RESULTS_SHARE, labelWithFiles(files));
  const message = [
    `Request: ${record.input}`,
    record.stopReason ? `\nStopped early: ${record.stopReason}` : "",
    "",
    "Task results:",
    ...results,
    names.length ? `\nFiles: ${names.join(", ")}` : "",
  ].join("\n");

  let result: string;
  let usage: Partial<Usage> | undefined;
  const history = await sessionHistory(ports, record);
  const window = new ContextWindow({ model: ports.model.name, budgetTokens: ports.settings.budgets.contextTokens });
  const checked = { promptTokens: 0, completionTokens: 0, llmCalls: 0 };
  const guard = new TextGuard(ports, runId, record.guardrails, { agent: "summarizer" }, checked);
  const stream = textStream(
    ports,
    runId,
    { agent: "summarizer" },
    { restore: (text) => window.restoreText(text), guard, webhook: record.webhook ?? null },
  );
  // Its call is reserved against the run's budgets like an agent's; at a budget, the summary is written without one.
  const model = withBudget(portsForAgent(ports, record.agent).model, ports, async () => record);
  let stopReason = record.stopReason;
  try {
    if (record.budget?.exhausted) throw new BudgetExhaustedError("run", { tokens: 0, costMicros: 0 });
    const messages = window.build(summarizerPrompt({ files: fileLines(files), instructions: record.instructions }), [
      ...history,
      { role: "user", content: message },
    ]);
    const { value, replayed, inherited } = await journal.once(
      0,
      "llm",
      "",
      () =>
        model.complete({
          messages,
          role: "summarizer",
          onText: stream.onText,
          onReasoning: stream.onReasoning,
          onRetry: stream.onRetry,
        }),
      { defer: true },
    );
    // An inherited answer (a replay's, a fork's) was paid for by the run it came from.
    if (!replayed && !inherited) usage = { ...value.usage, llmCalls: 1, ...(value.fallback ? { fallbackCalls: 1 } : {}) };
    result = window.restoreText(value.content?.trim() ?? "") || mechanicalSummary(record.input, done, names);
  } catch (error) {
    if (error instanceof ReplayDivergedError) throw error; // a replay stops where it parts from its journal
    if (error instanceof BudgetExhaustedError) {
      // Delivered at the budget: "Finalize" ends the run budget_exhausted.
      stopReason ??= `Stopped at a budget: ${error.message}`;
      if (!record.budget?.exhausted && record.budget)
        await ports.runs.update(runId, { budget: { ...record.budget, exhausted: stopReason } });
    } else {
      logger.warn("summarizer model failed; using the mechanical summary", { runId: runId, error: errorMessage(error) });
    }
    result = mechanicalSummary(record.input, done, names);
  }
  if (stopReason && !result.includes(stopReason)) result = `${result}\n\n_${stopReason}_`;
  // The answer as people may see it (output guardrails); a block ends the run here.
  result = await guard.shown(result);
  if (checked.llmCalls) usage = addUsage(usage, checked);
  const whole = result;
  result = await fitText(ports.files, runId, "answer.md", result);
  if (result !== whole && !names.includes("answer.md")) names.push("answer.md");
  // The answer, the journal record, the session's turn and the last deltas together; "Finalize" only ends the run.
  await Promise.all([
    ports.runs.update(runId, { result, files: names }, undefined, usage),
    journal.flush(),
    rememberTurn(ports, { ...record, result }),
    stream.close(),
  ]);
  return { runId, files: names };
}

/** One line (or block) per task: its title, and its result whole when they all fit `budgetChars`. */
function resultLines(
  tasks: TaskRecord[],
  budgetChars: number,
  label = (t: TaskRecord) => `${t.title}: ${t.status === "failed" ? "FAILED: " : ""}`,
): string[] {
  const texts = shareBudget(
    tasks.map((t) => (t.result ?? "").trim()),
    budgetChars,
  );
  return tasks.map((t, i) => `- ${label(t)}${texts[i]}`);
}

/** A task's title with the files its tools wrote, so the answer can cite the files it relies on. */
const labelWithFiles = (files: readonly FileMeta[]) => (t: TaskRecord) => {
  const own = namesOfTask(files, t.taskId);
  return `${t.title}${own.length ? ` (files: ${own.join(", ")})` : ""}: ${t.status === "failed" ? "FAILED: " : ""}`;
};

function mechanicalSummary(input: string, tasks: TaskRecord[], files: string[]): string {
  return [
    `Request: ${input}`,
    "",
    "Results of the tasks:",
    ...resultLines(tasks, 40_000, (t) => `${t.title} (${t.status}): `),
    files.length ? `\nFiles: ${files.join(", ")}` : "",
  ].join("\n");
}

function addUsage(
  usage: Partial<Usage> | undefined,
  more: { promptTokens: number; completionTokens: number; llmCalls: number },
): Partial<Usage> {
  return {
    ...usage,
    promptTokens: (usage?.promptTokens ?? 0) + more.promptTokens,
    completionTokens: (usage?.completionTokens ?? 0) + more.completionTokens,
    llmCalls: (usage?.llmCalls ?? 0) + more.llmCalls,
  };
}
