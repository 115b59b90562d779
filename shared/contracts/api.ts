import * as z from "zod";
import { AgentRef, Instructions } from "./agents.js";
import { RunBudgetRequest, TenantBudget } from "./budget.js";
import { OnlineEvals } from "./evaluation.js";
import { GuardrailChecks } from "./guardrails.js";
import { ApprovalPolicy, ToolFailures } from "./interrupts.js";
import { Multitask, RequestedMode, RunBudgets } from "./run.js";
import { MAX_SANDBOXES_CEILING } from "./sandbox.js";
import { WebhookSubscription } from "./webhook.js";

export const Id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "1 to 64 letters, digits, '_' or '-'");

/** `POST /v1/runs`. Strict: an unknown field is a mistake the client should hear about. */
export const CreateRunRequest = z.strictObject({
  input: z.string().trim().min(1, "input must not be empty"),
  mode: RequestedMode.default("auto"),
  deepThink: z.boolean().optional(),
  sessionId: Id.optional(),
  /** When the session has a run in flight: reject (409), enqueue, interrupt or rollback; default: the tenant's setting. */
  multitask: Multitask.optional(),
  metadata: z
    .record(z.string().min(1).max(64), z.string().max(512))
    .refine((m) => Object.keys(m).length <= 16, "at most 16 metadata keys")
    .optional(),
  /** Pause for a person: before executing a plan, and before write (or all) tool calls. */
  approval: ApprovalPolicy.optional(),
  /** Budgets for this run, within the service's limits (defaults: 10 plan iterations, 30 rounds). */
  budgets: RunBudgets.optional(),
  /** The run's token and cost budget, checked before every model call (default: the tenant's `budget.run`). */
  budget: RunBudgetRequest.optional(),
  /** Where to send signed notifications (Standard Webhooks) when the run ends or waits. */
  webhook: WebhookSubscription.optional(),
  /** Uploaded files (ids from `POST /v1/files`) the run's agents can read. */
  files: z
    .array(z.string().regex(/^file_[a-z0-9]{1,60}$/, "a file id from POST /v1/files"))
    .max(20)
    .optional(),
  /** A saved agent (`PUT /v1/agents/{name}`): its latest version (`analyst`) or one version (`analyst@3`). */
  agent: AgentRef.optional(),
  /** The operator's instructions for this run, after the tenant's and the saved agent's (house rules, the answer's language, an SOP). */
  instructions: Instructions.optional(),
});
export type CreateRunRequest = z.infer<typeof CreateRunRequest>;

/** `PUT /v1/settings`: the tenant's defaults. */
export const TenantSettings = z.strictObject({
  /** What a run sent to a busy session does when its request names no `multitask` (default `reject`). */
  multitask: Multitask.optional(),
  /** Instructions every agent of the tenant's runs follows, in each role's prompt ("" removes them). */
  instructions: Instructions.optional(),
  /** Checks on every run's input and output (docs/api.md, "Guardrails"); `[]` removes them. */
  guardrails: GuardrailChecks.optional(),
  /** Score a sampled share of the tenant's succeeded runs with judges, after they end, within a daily cost cap. */
  onlineEvals: OnlineEvals.optional(),
  /** What a tool failure a person can fix does: `pause` the task, or `report` it to the model (default: pause when a person can decide). */
  toolFailures: ToolFailures.optional(),
  /** Token and cost budgets: every run's default, and the tenant's per day and per month. */
  budget: TenantBudget.optional(),
  /** run_code calls of the tenant's runs running at once, at most the deployment's `MAX_SANDBOXES_PER_TENANT` (its default). */
  maxSandboxes: z.number().int().min(1).max(MAX_SANDBOXES_CEILING).optional(),
  /** Streams and calls following a run the tenant may hold open at once: fewer than the deployment's MAX_OPEN_STREAMS_PER_TENANT, never more. */
  maxOpenStreams: z.number().int().min(1).max(1_000).optional(),
});
export type TenantSettings = z.infer<typeof TenantSettings>;

export const EventsQuery = z.strictObject({
  after: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/** A page of a run's tasks: `GET /v1/runs/{id}` shows the first, `GET /v1/runs/{id}/tasks` the others (fewer when their JSON would pass the view's byte budget). */
export const TASK_PAGE_SIZE = 100;
export const TasksQuery = z.strictObject({
  cursor: z.string().min(1).max(512).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(TASK_PAGE_SIZE),
});

/** The error body of every 4xx and 5xx. */
export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}
