import { logger } from "../observability.js";
import { NotFoundError, errorMessage } from "../errors.js";
import type { TaskRecord } from "../store/tasks.js";
import type { RunScope } from "./loop.js";
import { summarizerPrompt } from "./prompts.js";
import { sessionHistory } from "../memory/session.js";
import { ContextWindow } from "../memory/context.js";

const RESULT_CHARS = 1_500; // JD Genie cuts each message to 1,500 characters for the summary

/**
 * Writes the answer from the task results (tool context cleared: the summarizer sees results,
 * not tool chatter). If the model fails, a mechanical summary of the steps still answers.
 */
export async function summarize(run: RunScope): Promise<{ result: string; files: string[] }> {
  const { services } = run;
  const [record, tasks, files] = await Promise.all([
    services.runs.get(run.runId),
    services.tasks.list(run.runId),
    services.files.list(run.runId),
  ]);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const names = files.map((f) => f.name);
  const done = tasks.filter((t) => t.status !== "pending");
  const message = [
    `Request: ${record.input}`,
    record.stopReason ? `\nStopped early: ${record.stopReason}` : "",
    "",
    "Task results:",
    ...done.map((t) => `- ${t.title}: ${t.status === "failed" ? "FAILED: " : ""}${(t.result ?? "").slice(0, RESULT_CHARS)}`),
    names.length ? `\nFiles: ${names.join(", ")}` : "",
  ].join("\n");

  const journal = await services.journal.load(run.runId, "summary");
  let result: string;
  try {
    const history = await sessionHistory(services, record);
    const window = new ContextWindow({ model: services.model.name, budgetTokens: services.config.CONTEXT_BUDGET_TOKENS });
    const { value, replayed } = await journal.once(0, "llm", "", () =>
      services.model.complete({ messages: window.build(summarizerPrompt(), [...history, { role: "user", content: message }]) }),
    );
    if (!replayed) await services.runs.addUsage(run.runId, { ...value.usage, llmCalls: 1 });
    result = value.content?.trim() || mechanicalSummary(record.input, done, names);
  } catch (error) {
    logger.warn("summarizer model failed; using the mechanical summary", { runId: run.runId, error: errorMessage(error) });
    result = mechanicalSummary(record.input, done, names);
  }
  if (record.stopReason && !result.includes(record.stopReason)) result = `${result}\n\n_${record.stopReason}_`;
  await services.runs.update(run.runId, { result, files: names });
  return { result, files: names };
}

export function mechanicalSummary(input: string, tasks: TaskRecord[], files: string[]): string {
  return [
    `Request: ${input}`,
    "",
    "Results of the tasks:",
    ...tasks.map((t) => `- ${t.title} (${t.status}): ${(t.result ?? "").slice(0, RESULT_CHARS)}`),
    files.length ? `\nFiles: ${files.join(", ")}` : "",
  ].join("\n");
}
