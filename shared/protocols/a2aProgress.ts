import { EMPTY_RUN, type FoldedRun, foldRun } from "../apiClient/runFold.js";
import type { RunEvent } from "../contracts/events.js";
import { formatPlan } from "../contracts/plan.js";
import { modelRetryLine } from "./a2a.js";

/**
 * A run's progress as A2A working status updates: the run's events folded as every reader folds
 * them (apiClient/runFold.ts), and a line for what each event changed there: the plan, a task
 * started or ended, a tool called. The rest of the log (text as it streams, results) stays in the
 * run's own stream. Two events change no state the fold keeps, and say what they are themselves:
 * a model call waiting to be retried, a partial reply withdrawn.
 */
export class A2aProgress {
  private run: FoldedRun = EMPTY_RUN;

  /** The line for `event` (undefined: nothing to tell, or an event already folded). */
  next(event: RunEvent): string | undefined {
    const before = this.run;
    this.run = foldRun(before, event);
    return this.run.seq === before.seq ? undefined : progressLine(before, this.run, event);
  }
}

/** What changed from `before` to `after` by `event`, as one line (undefined: nothing to tell). */
function progressLine(before: FoldedRun, after: FoldedRun, event: RunEvent): string | undefined {
  if (after.plan && after.plan !== before.plan)
    return [formatPlan(after.plan).split("\n")[0], ...after.plan.steps.map((step, i) => `${i + 1}. [${step.status}] ${step.title}`)].join(
      "\n",
    );
  for (const [key, task] of after.tasks) {
    const was = before.tasks.get(key);
    if (was === task) continue;
    if (task.status === "running") return was ? undefined : `Started ${task.taskId}: ${task.title}`;
    // Ended: also a task whose start came before this reader began to fold.
    if (was?.status !== task.status) return `${task.status === "succeeded" ? "Finished" : "Failed"} ${task.taskId}: ${task.title}`;
  }
  for (const call of after.calls.values()) if (!before.calls.has(call.callId)) return `Calling ${call.tool}`;
  if (event.type === "model.retrying") return modelRetryLine(event.data);
  if (event.type === "agent.withdrawn")
    return `The ${event.data.taskId ? `${event.data.agent} of ${event.data.taskId}` : event.data.agent}'s partial reply is withdrawn: it broke off and is retried`;
  return undefined;
}
