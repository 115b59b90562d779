import * as z from "zod";
import { RoleSettings } from "../llm/roleSettings.js";
import { RunBudget } from "./budget.js";
import { RunEvaluation } from "./evaluation.js";
import { GuardrailCheck } from "./guardrails.js";
import { ApprovalPolicy, ToolFailures } from "./interrupts.js";
import { Plan } from "./plan.js";
import { RUN_STATUSES } from "./terminal.js";
import { SealedSecret } from "./toolSources.js";

export const RunStatus = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatus>;

/**
 * What a run submitted to a session that has a run in flight does: refused (409), waits its turn,
 * stops the running one at its next safe point and follows it, or cancels it and takes its place.
 */
export const Multitask = z.enum(["reject", "enqueue", "interrupt", "rollback"]);
export type Multitask = z.infer<typeof Multitask>;

export const RequestedMode = z.enum(["auto", "react", "plan_solve"]);
export type RequestedMode = z.infer<typeof RequestedMode>;

export const Usage = z.object({
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  llmCalls: z.number().int(),
  toolCalls: z.number().int(),
  /** Model calls the fallback model answered (the first stayed unavailable after its retries). */
  fallbackCalls: z.number().int().optional(),
});
export type Usage = z.infer<typeof Usage>;
export const emptyUsage = (): Usage => ({ promptTokens: 0, completionTokens: 0, llmCalls: 0, toolCalls: 0 });

export const RunBudgets = z.strictObject({
  maxPlanIterations: z.number().int().min(1).max(20).optional(),
  maxRounds: z.number().int().min(1).max(50).optional(),
});
export type RunBudgets = z.infer<typeof RunBudgets>;

/**
 * An A2A push notification config, kept on the run's webhook subscription: notifications go out
 * through Stepwise's signed webhooks, with the A2A body and the config's token or credentials.
 * The token and the credentials are the receiver's secrets: kept sealed with KMS, as tool source
 * headers are (shared/protocols/a2a.ts seals and opens them).
 */
/** A push config's token or credentials as kept: sealed; a plain string on records written before sealing, read as is. */
const KeptSecret = z.union([SealedSecret, z.string()]);

export const A2APush = z.object({
  id: z.string(),
  token: KeptSecret.optional(),
  authentication: z.object({ scheme: z.string(), credentials: KeptSecret }).optional(),
  /** The A2A version the config was set over: the body is that version's. */
  wireVersion: z.enum(["1.0", "0.3"]),
});
export type A2APush = z.infer<typeof A2APush>;

/** Model settings per role, as a saved agent sets them (no `default`: each role is named). */
export const AgentRoleSettings = RoleSettings.omit({ default: true });

/**
 * What a run keeps of the saved agent it named: the exact version, and what its agents need while
 * they run (tools, model settings), so a new version or a deletion never changes a running run.
 */
export const RunAgent = z.object({
  name: z.string(),
  version: z.number().int(),
  tools: z.array(z.string()).optional(),
  roles: AgentRoleSettings.optional(),
});
export type RunAgent = z.infer<typeof RunAgent>;

export const RunError = z.object({ code: z.string(), message: z.string() });
export type RunError = z.infer<typeof RunError>;

/** The run record (`RUN#id` / `META`). Versioned: a run may wait for days across deploys. */
export const RunRecord = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  tenantId: z.string(),
  sessionId: z.string(),
  /** The session was created for this run (no earlier turns to read). */
  newSession: z.boolean().optional(),
  /** The run's place in its session, by submission: its turn follows turns with lower numbers. */
  turn: z.number().int().optional(),
  /** The run waited behind this one (the session's run in flight, or the one queued before it). */
  queuedBehind: z.string().optional(),
  status: RunStatus,
  requestedMode: RequestedMode,
  /** How the run is handled: answered by the router directly, one ReAct agent, or plan and solve. */
  mode: z.enum(["answer", "react", "plan_solve"]).optional(),
  deepThink: z.boolean().optional(),
  input: z.string(),
  metadata: z.record(z.string(), z.string()),
  approval: ApprovalPolicy.optional(),
  budgets: RunBudgets.optional(),
  /** Token and cost budgets (the run's and the tenant's period limits), fixed at submission. */
  budget: RunBudget.optional(),
  /** The operator's instructions every agent of the run follows (the tenant's, the saved agent's, the run's), fixed at submission. */
  instructions: z.string().optional(),
  /** The saved agent the run named, as it was when the run was submitted. */
  agent: RunAgent.optional(),
  /** The guardrail checks of the run (the tenant's, then its saved agent's), fixed at submission. */
  guardrails: z.array(GuardrailCheck).optional(),
  /** Why the run stopped before its plan was done (a budget), for the summary. */
  stopReason: z.string().optional(),
  /** Where signed notifications go; `a2a` when an A2A client set it (an A2A body, its token or credentials). */
  webhook: z.object({ url: z.string(), events: z.array(z.string()).optional(), a2a: A2APush.optional() }).optional(),
  /** Where clients find the run, fixed at submission (webhooks link to it). */
  links: z.object({ self: z.string(), events: z.string(), stream: z.string() }).optional(),
  idempotencyKey: z.string().optional(),
  plan: Plan.optional(),
  /** Fingerprint of the last plan a person approved. */
  approvedPlan: z.string().optional(),
  result: z.string().optional(),
  /** The session's title, on the run whose turn it was made from (shared/steps/sessionTitle.ts). */
  title: z.string().optional(),
  files: z.array(z.string()).optional(),
  error: RunError.optional(),
  usage: Usage,
  executionArn: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  endedAt: z.string().optional(),
  /** State transitions of the ended execution, counted once from its history. */
  stateTransitions: z.number().int().optional(),
  /** A model call of the run waits to be retried (its last `model.retrying`); null once it answered. */
  modelWait: z
    .object({
      agent: z.string(),
      taskId: z.string().optional(),
      attempt: z.number().int(),
      retries: z.number().int(),
      reason: z.string(),
      retryAt: z.string(),
    })
    .nullable()
    .optional(),
  /** Sequence number of the terminal event, reserved before the run ends (so it is never lost). */
  terminalSeq: z.number().int().optional(),
  /** The run this one replays from its journal (shared/run/replay.ts): no model call, no tool, no side effect. */
  replayOf: z.string().optional(),
  /** The run this one forks: its journal reused up to `at`, with edits, then live. */
  forkOf: z.object({ runId: z.string(), at: z.object({ scope: z.string(), round: z.number().int() }) }).optional(),
  /** How many forks were made of this run (counted as each starts): its view looks for them only when some were. */
  forkCount: z.number().int().min(0).optional(),
  /** The run this one was exported from, elsewhere (POST /v1/runs/import): its record, journal and events, to replay here. */
  importedFrom: z.string().optional(),
  /** What a tool failure a person can fix does in this run (the tenant's setting when it was submitted; unset: pause). */
  toolFailures: ToolFailures.optional(),
  /** The tenant's own bound on its code sandboxes running at once when the run was submitted (its `maxSandboxes`; unset: the deployment's). */
  maxSandboxes: z.number().int().min(1).optional(),
  /** The online eval's scores of the ended run (shared/run/onlineEvals.ts), or why it was not scored. */
  evaluation: RunEvaluation.optional(),
});
export type RunRecord = z.infer<typeof RunRecord>;
