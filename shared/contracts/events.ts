import * as z from "zod";
import { RunEvaluation } from "./evaluation.js";
import { ToolFailure } from "./interrupts.js";
import { Plan } from "./plan.js";

/** Which agent an event comes from; executor events also name their task. */
export const AgentRole = z.enum(["router", "planner", "executor", "react", "summarizer"]);
export type AgentRole = z.infer<typeof AgentRole>;

const AgentSource = z.object({
  agent: AgentRole,
  taskId: z.string().optional(),
});

/** Progress of one tool call, shown while it runs: its agent, and the call it belongs to. */
const CallSource = AgentSource.extend({ callId: z.string() });

/** What a search stage did: queries sent, pages read, notes written. */
const SearchStage = z.enum(["queries", "pages", "notes"]);

/**
 * A tool call a person declined: rejected when asked to approve it, or skipped after it failed.
 * Its task went on without it, so the task is not done as planned.
 */
export const UndoneCall = z.object({ tool: z.string(), decision: z.enum(["reject", "skip"]) });
export type UndoneCall = z.infer<typeof UndoneCall>;

/** Event bodies, a discriminated union on `type` (what SSE clients receive as `event:`). */
export const EventBody = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("run.started"),
    data: z.object({ mode: z.string(), input: z.string() }),
  }),
  z.object({ type: z.literal("plan.updated"), data: z.object({ plan: Plan }) }),
  z.object({
    type: z.literal("task.started"),
    data: z.object({ taskId: z.string(), title: z.string(), iteration: z.number().int(), stepIndex: z.number().int() }),
  }),
  z.object({ type: z.literal("agent.thought"), data: AgentSource.extend({ text: z.string() }) }),
  z.object({ type: z.literal("agent.delta"), data: AgentSource.extend({ text: z.string() }) }),
  /** A model's reasoning text as it streams (`reasoning_content`): shown to people, never fed back to a model. */
  z.object({ type: z.literal("agent.reasoning"), data: AgentSource.extend({ text: z.string() }) }),
  /**
   * A model call failed and waits to be tried again: the `attempt`-th retry of `retries`, why, and
   * the wait before it (`waitMs`). Shown while the run waits; the run's `statusDetail` says it too.
   */
  z.object({
    type: z.literal("model.retrying"),
    data: AgentSource.extend({ attempt: z.number().int(), retries: z.number().int(), reason: z.string(), waitMs: z.number().int() }),
  }),
  /**
   * Drop the text this agent (and task) streamed since it last did something else, `agent.delta`
   * and `agent.reasoning` alike: the reply it belonged to broke off and is being retried.
   */
  z.object({ type: z.literal("agent.withdrawn"), data: AgentSource.extend({ reason: z.string() }) }),
  z.object({
    type: z.literal("tool.called"),
    // persona: the job title of who makes the call (the model's, or one derived from the tool).
    data: AgentSource.extend({ callId: z.string(), tool: z.string(), arguments: z.unknown(), persona: z.string().optional() }),
  }),
  z.object({
    type: z.literal("tool.result"),
    data: AgentSource.extend({ callId: z.string(), tool: z.string(), ok: z.boolean(), output: z.string() }),
  }),
  /**
   * The code run_code runs (`part: "source"`), then what it printed (`part: "output"`: stdout,
   * stderr and any error, with `ok` false when it failed), both before the call's tool.result.
   */
  z.object({
    type: z.literal("code"),
    data: CallSource.extend({ part: z.enum(["source", "output"]), language: z.string(), text: z.string(), ok: z.boolean().optional() }),
  }),
  /** A report as it is written: each event adds `text` to the file `name`, which file.created announces once saved. */
  z.object({
    type: z.literal("report.delta"),
    data: CallSource.extend({ name: z.string(), format: z.string(), text: z.string() }),
  }),
  /** The report text streamed so far is void (its model reply broke off and is retried): readers drop it; the retry streams anew. */
  z.object({
    type: z.literal("report.withdrawn"),
    data: CallSource.extend({ name: z.string(), reason: z.string() }),
  }),
  /** A stage of a deep search: what it sent, read or wrote so far (`count` of them) and a line on it. */
  z.object({
    type: z.literal("search.progress"),
    data: CallSource.extend({ stage: SearchStage, count: z.number().int(), detail: z.string() }),
  }),
  z.object({
    type: z.literal("tool_source.unavailable"),
    data: z.object({ source: z.string(), reason: z.string() }),
  }),
  z.object({
    type: z.literal("task.completed"),
    data: z.object({
      taskId: z.string(),
      title: z.string(),
      iteration: z.number().int(),
      status: z.enum(["succeeded", "failed"]),
      result: z.string(),
      /** The executor stopped at its round budget; `result` is its summary of what was done and what was not. */
      stopReason: z.string().optional(),
      /** The files the task's tools wrote (events saved before files were tied to tasks have none). */
      files: z.array(z.string()).optional(),
      /** Tool calls a person declined: the task ended without them, not done as planned. */
      undone: z.array(UndoneCall).optional(),
    }),
  }),
  z.object({
    type: z.literal("interrupt.opened"),
    data: z.object({
      interruptId: z.string(),
      kind: z.string(),
      summary: z.string(),
      taskId: z.string().optional(),
      toolName: z.string().optional(),
      /** The tool call (as in its tool.called event) a tool approval or question concerns. */
      callId: z.string().optional(),
      arguments: z.unknown().optional(),
      question: z.string().optional(),
      /** A tool_failure's attempt and error. */
      failure: ToolFailure.optional(),
      /** Why a tool policy asks for this approval. */
      reason: z.string().optional(),
    }),
  }),
  z.object({
    type: z.literal("interrupt.resolved"),
    data: z.object({ interruptId: z.string(), kind: z.string(), decision: z.string(), message: z.string().optional() }),
  }),
  z.object({
    type: z.literal("file.created"),
    data: z.object({
      name: z.string(),
      contentType: z.string(),
      bytes: z.number().int(),
      description: z.string(),
      download: z.string(),
      /** The plan task whose tool wrote it (none for the run's own files, and in events saved before files were tied to tasks). */
      taskId: z.string().optional(),
    }),
  }),
  z.object({
    type: z.literal("run.succeeded"),
    /** `stopReason`: the run stopped at a budget, and its answer says what was done and what was not. */
    data: z.object({ result: z.string(), files: z.array(z.string()), stopReason: z.string().optional() }),
  }),
  z.object({
    type: z.literal("run.failed"),
    data: z.object({ error: z.object({ code: z.string(), message: z.string() }) }),
  }),
  z.object({ type: z.literal("run.timed_out"), data: z.object({ reason: z.string() }) }),
  /**
   * The run continues: a failed run resumed (POST /v1/runs/{id}/resume; events after its run.failed
   * follow), or, locally, after a restart (in the place of an event the stop cut off while it was written).
   */
  z.object({ type: z.literal("run.resumed"), data: z.object({ redrive: z.boolean(), reason: z.string().optional() }) }),
  z.object({ type: z.literal("run.cancelled"), data: z.object({ reason: z.string() }) }),
  /** The run waits: its session has a run in flight (`runId`, the one it follows); it starts when that one ends. */
  z.object({
    type: z.literal("run.queued_behind"),
    data: z.object({ runId: z.string(), activeRunId: z.string(), position: z.number().int() }),
  }),
  /** A newer message to the session stopped the run at a safe point; what it finished stays in the session. */
  /** The run reached its token or cost budget and ended with a summary of what it did (`stopReason` says which budget). */
  z.object({
    type: z.literal("run.budget_exhausted"),
    data: z.object({ result: z.string(), files: z.array(z.string()), stopReason: z.string() }),
  }),
  z.object({ type: z.literal("run.interrupted"), data: z.object({ reason: z.string(), byRunId: z.string().optional() }) }),
  /**
   * A guardrail decided: a check on a text (the run's input, an answer, a streamed window, a tool's
   * result) or a tool policy on a call (`kind` "policy", stage `tool_call`). `pass` is only ever a
   * check's; a policy in `log_only` mode says what it would have done. The text a check blocked is
   * never in the event.
   */
  z.object({
    type: z.literal("guardrail.decided"),
    data: z.object({
      /** The check's or the policy's name. */
      check: z.string(),
      /** The check's kind, or "policy". */
      kind: z.string(),
      stage: z.enum(["input", "output", "tool_results", "tool_call"]),
      verdict: z.enum(["pass", "block", "redact", "warn", "deny", "require_approval"]),
      reason: z.string().optional(),
      /** A policy's: whether its decision held (`enforce`) or was only logged (`log_only`). */
      mode: z.enum(["enforce", "log_only"]).optional(),
      /** The policy's version that decided. */
      version: z.number().int().optional(),
      /** The check could not answer (its service failed) and its failure mode decided. */
      failed: z.boolean().optional(),
      agent: AgentRole.optional(),
      taskId: z.string().optional(),
      /** The tool whose result was checked (stage tool_results) or whose call a policy decided. */
      tool: z.string().optional(),
      callId: z.string().optional(),
    }),
  }),
  /** A guardrail check blocked the run: it ends here, with the check's reason. */
  z.object({ type: z.literal("run.blocked"), data: z.object({ check: z.string(), reason: z.string() }) }),
  /** An online eval scored the ended run (or said why not): written after its end, the log stays closed. */
  z.object({ type: z.literal("eval.scored"), data: RunEvaluation }),
]);
export type EventBody = z.infer<typeof EventBody>;
export type EventType = EventBody["type"];

/** The events a tool call reports while it runs. */
const PROGRESS_EVENTS = ["code", "report.delta", "report.withdrawn", "search.progress"] as const;
export type ProgressType = (typeof PROGRESS_EVENTS)[number];

/** A progress event as a tool gives it: the agent and call it belongs to are added by the loop. */
export type ToolProgress = {
  [K in ProgressType]: { type: K; data: Omit<Extract<EventBody, { type: K }>["data"], "agent" | "taskId" | "callId"> };
}[ProgressType];

/** A stored event: its body plus the sequence number and time the log gave it. */
export type RunEvent = EventBody & { seq: number; at: string };
