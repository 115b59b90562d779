/**
 * Step Functions ends a Standard execution at 25,000 history events. A run continues in a new
 * execution (same run, same event log) before it would pass its budget: at a plan step, when an
 * executor hands back (a person's decision, or its Lambda's time is up), and between ReAct turns.
 * What each adds to the history on AWS, per state:
 * - Plan: a Task (entered, scheduled, started, succeeded, exited: 5); "More tasks to run?": a
 *   Choice (entered, exited: 2); "Execute tasks": a Map (entered, started, succeeded, exited: 4).
 *   11 per iteration.
 * - Each task: the Map iteration (started, succeeded: 2), "Execute task" (5), "Task finished?" (2),
 *   "Task done" (2). 11 per task.
 * - A hand-back, where an agent waits for a person: the "Wait for …" callback Task (it also has
 *   "submitted": 6), then the agent's step again (5) and its Choice (2). 13, for a plan approval
 *   (Plan, "More tasks to run?"), a task's tool approval or question ("Execute task", "Task
 *   finished?") and a ReAct run's ("Agent turn", "Agent finished?"). A hand-back when the Lambda's
 *   time is up costs the last two only (7); it is counted as 13 too.
 */
export const HISTORY_EVENT_LIMIT = 25_000;
const ITERATION_EVENTS = 11;
const TASK_EVENTS = 11;
const HAND_BACK_EVENTS = 13;
/**
 * Kept free beyond what is counted: Plan again and its Choice, a plan approval, Summarize and
 * Finalize (or Record failure) and the execution's end (33), and a few Lambda retries (3 each).
 */
export const HISTORY_RESERVE = 60;
/** What a continued execution has used when its first state starts: its start, "Start run", "Choose mode". */
const CONTINUED_START_EVENTS = 10;
/** "Execute tasks" started (2), and per task its iteration's start and "Execute task" so far (4). */
const MAP_START_EVENTS = 2;
const TASK_START_EVENTS = 4;
/** "Agent turn" so far (entered, scheduled, started: 3). */
const AGENT_START_EVENTS = 3;

/**
 * The smallest budget a deployment may set: a continued ReAct run must hold a turn that hands
 * back, so a ReAct run always has a next execution to go on in.
 */
export const MIN_HISTORY_EVENT_BUDGET = CONTINUED_START_EVENTS + AGENT_START_EVENTS + HAND_BACK_EVENTS + HISTORY_RESERVE;

export type HistoryVerdict = "fits" | "new_execution" | "never";

/**
 * The estimate a run carries in its state (`history`): the events its execution has used when the
 * next Lambda step starts, added up from the states it passed by the costs above. It misses only
 * Lambda retries (3 each), so within a tenth of the budget (and wherever there is no estimate) the
 * execution's own count is asked for (GetExecutionHistory, a quota of 20 calls/s per account), and
 * that count is carried on instead. A run far from its budget never asks.
 */
const NEAR_BUDGET_SHARE = 0.1;
/** "Start run" hands on: the execution's start, "Start run", "Choose mode" (as a continued execution counts it). */
export const START_EVENTS = CONTINUED_START_EVENTS;
/** "Route request" and "Choose mode" again. */
export const ROUTE_EVENTS = 7;
/** A Lambda step and the Choice after it: entered, scheduled, started, succeeded, exited; entered, exited. */
export const STEP_AND_CHOICE_EVENTS = 7;
/** A "Wait for …" callback Task (it also has "submitted"): the rest of a hand-back is its step again. */
export const WAIT_EVENTS = 6;
/** "Execute tasks" (entered, started, succeeded, exited: 4) and each task's 11. */
export const mapEvents = (tasks: number) => 4 + TASK_EVENTS * tasks;
/** Hand-backs a Map's executors made (each waited for a person, or ran out of time), weighed. */
export const handBacksEvents = (handBacks: number) => HAND_BACK_EVENTS * handBacks;

/**
 * The events used so far: the carried estimate while what comes next clearly fits the budget by it
 * (`fits`, asked with a tenth of the budget to spare), else the execution's own count (`count`,
 * one GetExecutionHistory call).
 */
export async function eventsUsed(
  estimate: number | undefined,
  budget: number,
  fits: (used: number) => boolean,
  count: () => Promise<number>,
): Promise<number> {
  if (estimate !== undefined && fits(estimate + Math.ceil(budget * NEAR_BUDGET_SHARE))) return estimate;
  return count();
}

/** The history events a plan iteration of `tasks` tasks adds (hand-backs apart). */
export function iterationEvents(tasks: number): number {
  return ITERATION_EVENTS + TASK_EVENTS * tasks;
}

/**
 * Before an iteration of `tasks` tasks, with `used` events in the execution's history so far:
 * "fits" it runs here; "new_execution" the run goes on in a new execution first; "never" not even a new
 * execution could hold it within `budget` (the deployment's budget is too small for its plans).
 */
export function historyVerdict(used: number, tasks: number, budget: number): HistoryVerdict {
  const needed = iterationEvents(tasks) + HISTORY_RESERVE;
  if (used + needed <= budget) return "fits";
  return CONTINUED_START_EVENTS + needed <= budget ? "new_execution" : "never";
}

/** What an executor hands back on needs: every executor of the Map may hand back at once, and none may have finished. */
export function handBackEvents(tasks: number): number {
  return (TASK_EVENTS + HAND_BACK_EVENTS) * tasks + HISTORY_RESERVE;
}

/**
 * When one of the `tasks` executors of a Map hands back (it waits for a person, or its time is up),
 * with `used` events so far: "fits" it goes on here; "new_execution" its task goes on in the run's next
 * execution; "never" not even a new execution could hold these tasks' first hand-backs.
 */
export function handBackVerdict(used: number, tasks: number, budget: number): HistoryVerdict {
  if (used + handBackEvents(tasks) <= budget) return "fits";
  return newExecutionHoldsHandBacks(tasks, budget) ? "new_execution" : "never";
}

/**
 * Whether a run's next execution holds the first hand-backs of `tasks` deferred tasks: then they
 * are not deferred again before one of them moves on.
 */
export function newExecutionHoldsHandBacks(tasks: number, budget: number): boolean {
  return CONTINUED_START_EVENTS + MAP_START_EVENTS + TASK_START_EVENTS * tasks + handBackEvents(tasks) <= budget;
}

/**
 * Whether a ReAct run's next turn (after a person's decision, or after a turn whose time was up)
 * fits in this execution; else the run goes on in a new one, which always holds it
 * (MIN_HISTORY_EVENT_BUDGET).
 */
export function agentTurnFits(used: number, budget: number): boolean {
  return used + HAND_BACK_EVENTS + HISTORY_RESERVE <= budget;
}
