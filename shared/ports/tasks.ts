import type { UndoneCall } from "../contracts/events.js";
import type { GuardrailCheck } from "../contracts/guardrails.js";
import type { Plan } from "../contracts/plan.js";
import type { RunAgent, Usage } from "../contracts/run.js";
import type { FileLine } from "./files.js";

/** A sub-task's whole result; the state machine carries only a preview. */
export interface TaskRecord {
  iteration: number;
  stepIndex: number;
  taskId: string;
  title: string;
  /** The task as the planner wrote it (the state machine carries a short title). */
  text: string;
  status: "pending" | "succeeded" | "failed";
  result?: string;
  startedAt?: string;
  endedAt?: string;
  /** The executor's model and tool calls; the run's usage is its own plus its tasks'. */
  usage?: Partial<Usage>;
  /** The executor stopped at its round budget: `result` is its summary of what was done and what was not. */
  stopReason?: string;
  /** Tool calls a person declined: the task ended without them, not done as planned. */
  undone?: UndoneCall[];
}

/**
 * What every executor of one step starts from, written once by the planner when it hands the step
 * to the Map: the request, the plan, the results of earlier steps (the run memory at the fork
 * point) and the run's settings. Executors read this one item instead of the run and every task,
 * and a retried or resumed executor sees exactly the same memory.
 */
export interface StepContext {
  iteration: number;
  stepIndex: number;
  tenantId: string;
  request: string;
  plan?: Plan;
  /** Earlier steps' results, one line per task, in task order. */
  priorResults: string[];
  approvalTools?: "none" | "write" | "all";
  /** What a tool failure a person can fix does (the run's setting; unset: pause). */
  toolFailures?: "pause" | "report";
  /** The tenant's own bound on its code sandboxes running at once, as the run recorded it. */
  maxSandboxes?: number;
  /** The run's operator's instructions and saved agent (its tools and model settings), as the planner read them from the run. */
  instructions?: string;
  agent?: RunAgent;
  /** The run's guardrail checks: its executors' streamed text, answers and tool results pass them. */
  guardrails?: GuardrailCheck[];
  maxRounds: number;
  tasks: { taskId: string; title: string; text: string }[];
  /** The run's files when the step started (its executors run side by side and see the same list); names only in steps saved before November 2026. */
  files?: Array<string | FileLine>;
}

/**
 * The tasks port: task records and step contexts of plan_solve runs (the journal's commit writes
 * them together with its entries). Adapter: TaskStore (DynamoDB); fake: shared/testing/memoryTasks.ts.
 */
export interface Tasks {
  put(runId: string, task: TaskRecord): Promise<void>;
  get(runId: string, iteration: number, taskId: string): Promise<TaskRecord | undefined>;
  step(runId: string, iteration: number): Promise<StepContext | undefined>;
  /** The step's context and the run's status, in one read. */
  stepAndRunStatus(runId: string, iteration: number): Promise<{ step?: StepContext; status?: string }>;
  /** Results of one iteration, or of the whole run, in iteration then task order. */
  list(runId: string, iteration?: number): Promise<TaskRecord[]>;
}

/** Task ids are "t1", "t2", … ; compare by number so t10 follows t9. */
function compareTaskIds(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

/** How task lists come: by iteration, then by task id. */
export function compareTasks(a: Pick<TaskRecord, "iteration" | "taskId">, b: Pick<TaskRecord, "iteration" | "taskId">): number {
  return a.iteration - b.iteration || compareTaskIds(a.taskId, b.taskId);
}
