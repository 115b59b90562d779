import * as z from "zod";
import { SCHEMA_VERSION } from "./schemaVersion.js";

/**
 * Payloads that cross the state machine. They carry ids and small control fields only: messages,
 * tool outputs and files live in DynamoDB, so no state comes near the 256 KiB limit, and the
 * Step Functions console shows each state's input and output at a glance.
 */

export const RunRef = z.object({ runId: z.string().min(1) });

/** The execution input of a run: its id, and the schema version of the state it starts. */
export function executionInput(runId: string): string {
  return JSON.stringify({ runId, schemaVersion: SCHEMA_VERSION });
}

/** `ended`: the run ended at its start (a guardrail blocked its input): the execution has nothing left to do. */
const ResolvedMode = z.enum(["react", "plan_solve", "route", "answer", "ended"]);
export type ResolvedMode = z.infer<typeof ResolvedMode>;

export const RunState = z.object({
  runId: z.string().min(1),
  mode: ResolvedMode,
  /**
   * The Step Functions history events this execution has used by the next Lambda step, estimated
   * from the states passed (shared/contracts/historyBudget.ts); absent in state written before it was kept.
   */
  history: z.number().int().min(0).optional(),
});
export type RunState = z.infer<typeof RunState>;

/** "Agent turn" (react): done when the agent has its answer or stopped. */
export const AgentTurnInput = RunState.extend({ turn: z.number().int().min(0).optional() });
export type AgentTurnInput = z.infer<typeof AgentTurnInput>;
/** "new_execution": the next turn runs in the run's next execution (this one's history is nearly full). */
export const AgentTurnOutput = RunState.extend({
  done: z.boolean(),
  turn: z.number().int(),
  interruptId: z.string().optional(),
  next: z.literal("new_execution").optional(),
});
export type AgentTurnOutput = z.infer<typeof AgentTurnOutput>;

const TaskRef = z.object({
  taskId: z.string().min(1).max(64),
  title: z.string().max(300),
});
export type TaskRef = z.infer<typeof TaskRef>;

/** One Map item: "Execute task". */
export const ExecuteTaskInput = z.object({
  runId: z.string().min(1),
  iteration: z.number().int().min(0),
  task: TaskRef,
  /** The execution this Map runs in, and how many tasks it runs (the history budget of a hand-back). */
  executionArn: z.string().min(1).optional(),
  tasks: z.number().int().min(1).max(40).optional(),
  /** How often this task handed back so far (each one weighs on the history budget). */
  handBacks: z.number().int().min(0).optional(),
});
export type ExecuteTaskInput = z.infer<typeof ExecuteTaskInput>;

/** The scope of a task's journal, events and logs: its iteration and id (`task#2#t3`). */
export const scopeOf = (input: Pick<ExecuteTaskInput, "iteration"> & { task: Pick<ExecuteTaskInput["task"], "taskId"> }) =>
  `task#${input.iteration}#${input.task.taskId}`;

/** One Map iteration's result: a short preview; the whole result is stored with the task. */
export const TaskResult = ExecuteTaskInput.extend({
  done: z.boolean(),
  status: z.enum(["succeeded", "failed"]).optional(),
  preview: z.string().max(300).optional(),
  /** Set while the task waits for a person ("Wait for tool approval"). */
  interruptId: z.string().optional(),
  /** The task goes on in the run's next execution: this one's history could not hold its hand-back. */
  deferred: z.literal(true).optional(),
});
export type TaskResult = z.infer<typeof TaskResult>;

/** Where a plan-and-solve run stands after "Plan": its iteration, and the plans a person rejected in it. */
const PlanProgress = RunState.extend({
  iteration: z.number().int().min(0),
  revision: z.number().int().min(0),
});
/** The plan step whose tasks run next: its index in the plan and the Map's items. */
const PlanStep = PlanProgress.extend({
  stepIndex: z.number().int().min(0),
  tasks: z.array(TaskRef).max(40),
});

/**
 * "Plan": what to do next, one shape per outcome ("More tasks to run?" branches on `next`):
 * run the step's tasks in this execution, or in the run's next one (this one's history is full);
 * wait for a person (the plan's approval, or the planner's question); or write the answer.
 */
const ExecuteStep = PlanStep.extend({ next: z.literal("execute") });
const ContinueStep = PlanStep.extend({ next: z.literal("new_execution") });
export const PlanOutput = z.discriminatedUnion("next", [
  ExecuteStep,
  ContinueStep,
  PlanProgress.extend({ next: z.literal("approve"), interruptId: z.string().min(1) }),
  PlanProgress.extend({ next: z.literal("summarize") }),
]);
export type PlanOutput = z.infer<typeof PlanOutput>;

/** "Plan" input: the run state, and after "Execute tasks" the previous output with the results. */
export const PlanInput = RunState.extend({
  iteration: z.number().int().min(0).optional(),
  revision: z.number().int().min(0).optional(),
  interruptId: z.string().optional(),
  /** The step the Map ran; states written by earlier versions say -1 for "none". */
  stepIndex: z.number().int().optional(),
  next: z.string().optional(),
  tasks: z.array(TaskRef).optional(),
  taskResults: z.array(TaskResult).optional(),
});
export type PlanInput = z.infer<typeof PlanInput>;

/** Where a run's next execution goes on: the plan's next tasks, or a ReAct run's next turn. */
const ContinuedState = z.union([ExecuteStep, AgentTurnInput]);
export type ContinuedState = z.infer<typeof ContinuedState>;

/**
 * What "Start run" receives: the execution input written by the API, or by "Continue in a new
 * execution" with where the run goes on (the new execution starts there).
 */
export const StartRunInput = RunRef.extend({ continued: ContinuedState.optional() });
export type StartRunInput = z.infer<typeof StartRunInput>;

/** The execution input of a run's next execution: the Plan's output, or the ReAct turn, it goes on from. */
export function continuedInput(state: ContinueRunInput["state"]): string {
  const continued: ContinuedState =
    "tasks" in state ? { ...state, next: "execute" } : { runId: state.runId, mode: state.mode, turn: state.turn };
  return JSON.stringify({ runId: state.runId, schemaVersion: SCHEMA_VERSION, continued });
}

/** "Continue in a new execution": the Plan's (or the Agent turn's) output, and the execution that ends here. */
export const ContinueRunInput = z.object({ state: z.union([ContinueStep, AgentTurnOutput]), executionArn: z.string().min(1) });
export type ContinueRunInput = z.infer<typeof ContinueRunInput>;

/** What a "Wait for …" callback task's Lambda receives. */
export const AwaitInterruptInput = z.object({
  runId: z.string().min(1),
  interruptId: z.string().min(1),
  taskToken: z.string().min(1),
});

/** The error Step Functions puts at ResultPath of a Catch. */
const CaughtError = z.object({ Error: z.string(), Cause: z.string().optional() });

export const RecordTaskFailureInput = ExecuteTaskInput.extend({ error: CaughtError });

export const RecordFailureInput = z.object({
  runId: z.string().min(1),
  error: CaughtError,
});
export type RecordFailureInput = z.infer<typeof RecordFailureInput>;

/** "Finalize" and "Record timeout": the run's end status. */
export const FinalizeOutput = RunRef.extend({ status: z.string() });
/** "Record failure": the run's end status, and the error the "Run failed" state reports. */
export const RecordFailureOutput = FinalizeOutput.extend({ error: z.string(), cause: z.string() });
/** "Summarize": the answer is written; the files the run produced. */
export const SummarizeOutput = RunRef.extend({ files: z.array(z.string()) });
/** "Continue in a new execution": the execution the run goes on in (none when the run ended meanwhile). */
export const ContinueRunOutput = RunRef.extend({ executionArn: z.string().optional() });
/** "Start run": the mode to run in, or (in a continued execution) the plan's next tasks or the ReAct run's next turn. */
export const StartRunOutput = ContinuedState;
/** The Lambda of a "Wait for …" callback state returns nothing: the person's decision is the state's output. */
export const AwaitInterruptOutput = z.void();
