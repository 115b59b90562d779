import * as z from "zod";

export const InterruptKind = z.enum(["plan_approval", "tool_approval", "ask_user", "tool_failure", "budget"]);
export type InterruptKind = z.infer<typeof InterruptKind>;

const Decision = z.enum(["approve", "reject", "edit", "answer", "retry", "skip", "fail"]);
export type Decision = z.infer<typeof Decision>;

/** Which decisions each kind of interrupt accepts. */
export const DECISIONS_BY_KIND: Record<InterruptKind, readonly Decision[]> = {
  plan_approval: ["approve", "reject"],
  tool_approval: ["approve", "reject", "edit"],
  ask_user: ["answer"],
  /** A call that failed for a reason a person can fix, or whose outcome is unknown: run it again (as is, or edited), skip it with a message, or fail the task. */
  tool_failure: ["retry", "edit", "skip", "fail"],
  // approve extends the budget (arguments: how much to add); reject ends the run with a summary.
  budget: ["approve", "reject"],
};

/** What failed, on a `tool_failure` interrupt: the attempt, the error, and why a person is asked. */
export const ToolFailure = z.object({
  /** Which attempt of the call failed (1 for the first). */
  attempt: z.number().int().min(1),
  /** The tool's error, as the model would have read it. */
  error: z.string(),
  /** unauthorized, forbidden, rate_limited, unavailable; in_doubt: a write tool started and no outcome was recorded. */
  reason: z.enum(["unauthorized", "forbidden", "rate_limited", "unavailable", "in_doubt"]),
  /** The HTTP status the tool's service answered, when it answered. */
  status: z.number().int().optional(),
});
export type ToolFailure = z.infer<typeof ToolFailure>;

/**
 * What a tool failure a person can fix does (a tenant setting): `pause` the task on a `tool_failure`
 * interrupt, or `report` the error to the model as any failed call (for runs no person watches).
 */
export const ToolFailures = z.enum(["pause", "report"]);
export type ToolFailures = z.infer<typeof ToolFailures>;

/** `POST /v1/runs/{id}/interrupts/{interruptId}`. */
export const ResolveInterruptRequest = z.strictObject({
  decision: Decision,
  arguments: z.record(z.string(), z.unknown()).optional(),
  message: z.string().max(8_000).optional(),
});
export type ResolveInterruptRequest = z.infer<typeof ResolveInterruptRequest>;

export const Resolution = z.object({
  decision: Decision,
  arguments: z.record(z.string(), z.unknown()).optional(),
  message: z.string().optional(),
  resolvedAt: z.string(),
});
export type Resolution = z.infer<typeof Resolution>;

/** A pause of the run waiting for a person (`RUN#id` / `INT#id`). The task token never leaves the store. */
export const Interrupt = z.object({
  schemaVersion: z.literal(1),
  interruptId: z.string(),
  runId: z.string(),
  kind: InterruptKind,
  status: z.enum(["pending", "resolved", "timed_out", "cancelled"]),
  summary: z.string(),
  taskId: z.string().optional(),
  toolName: z.string().optional(),
  /** The model's id for the tool call a tool approval (or question) concerns. */
  callId: z.string().optional(),
  arguments: z.unknown().optional(),
  question: z.string().optional(),
  /** A tool_failure's attempt and error. */
  failure: ToolFailure.optional(),
  /** Why a tool policy asks for this approval (its `@reason`). */
  reason: z.string().optional(),
  resolution: Resolution.optional(),
  createdAt: z.string(),
});
export type Interrupt = z.infer<typeof Interrupt>;

/** Approval policy of a run (`approval` on submit). */
export const ApprovalPolicy = z.strictObject({
  plan: z.boolean().default(false),
  tools: z.enum(["none", "write", "all"]).default("none"),
});
export type ApprovalPolicy = z.infer<typeof ApprovalPolicy>;
