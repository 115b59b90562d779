/**
 * Step Functions ends a Standard execution at 25,000 history events. A run that plans many
 * iterations continues in a new execution (same run, same event log) before it would pass its
 * budget. What one plan iteration adds to the history on AWS, per state:
 * - Plan: a Task (entered, scheduled, started, succeeded, exited: 5); "More tasks to run?": a
 *   Choice (entered, exited: 2); "Execute tasks": a Map (entered, started, succeeded, exited: 4).
 *   11 per iteration.
 * - Each task: the Map iteration (started, succeeded: 2), "Execute task" (5), "Task finished?" (2),
 *   "Task done" (2). 11 per task.
 * - A person's approval of the plan: "Wait for plan approval" (a callback Task also has "submitted":
 *   6), then Plan (5) and its Choice (2) again. 13 per approval.
 */
export const HISTORY_EVENT_LIMIT = 25_000;
export const ITERATION_EVENTS = 11;
export const TASK_EVENTS = 11;
export const APPROVAL_EVENTS = 13;
/**
 * Kept free beyond the next iteration: a plan approval, a tool approval or a retry in a few tasks,
 * then Summarize and Finalize (or Record failure) and the execution's end.
 */
export const HISTORY_RESERVE = 60;
/** What a continued execution has used when its first iteration starts: its start, "Start run", "Choose mode". */
const CONTINUED_START_EVENTS = 10;

/** The history events a plan iteration of `tasks` tasks adds (approvals apart). */
export function iterationEvents(tasks: number): number {
  return ITERATION_EVENTS + TASK_EVENTS * tasks;
}

/**
 * Before an iteration of `tasks` tasks, with `used` events in the execution's history so far:
 * "fits" it runs here; "continue" the run goes on in a new execution first; "never" not even a new
 * execution could hold it within `budget` (the deployment's budget is too small for its plans).
 */
export function historyVerdict(used: number, tasks: number, budget: number): "fits" | "continue" | "never" {
  const needed = iterationEvents(tasks) + HISTORY_RESERVE;
  if (used + needed <= budget) return "fits";
  return CONTINUED_START_EVENTS + needed <= budget ? "continue" : "never";
}
