import * as z from "zod";
import { RunBudgetView } from "./budget.js";
import { OnlineEvals, RunEvaluation } from "./evaluation.js";
import { EventBody } from "./events.js";
import { ApprovalPolicy, Interrupt, ToolFailures } from "./interrupts.js";
import { Plan } from "./plan.js";
import { RequestedMode, RunError, RunStatus, Usage } from "./run.js";

/**
 * What the API answers, as zod schemas: the OpenAPI document is generated from these and from
 * the request contracts (one source of truth), and tests parse real answers with them.
 */
export const ErrorResponse = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});

const RunLinks = z.object({
  self: z.string(),
  events: z.string(),
  stream: z.string(),
  /** The Step Functions console, on AWS. */
  console: z.string().optional(),
});

const RunUsage = Usage.extend({ stateTransitions: z.number().int().optional() });

export const CreateRunResponse = z.object({ runId: z.string(), sessionId: z.string(), status: RunStatus, links: RunLinks });
export type CreateRunResponse = z.infer<typeof CreateRunResponse>;

/** An interrupt as clients see it: the stored one without its schema version (the token never is in it). */
export const InterruptView = Interrupt.omit({ schemaVersion: true });
export type InterruptView = z.infer<typeof InterruptView>;

export const FileView = z.object({
  name: z.string(),
  description: z.string(),
  contentType: z.string(),
  bytes: z.number().int(),
  createdAt: z.string(),
  taskId: z.string().optional().describe("The plan task whose tool wrote it; none for uploads and the run's own files."),
});
export type FileView = z.infer<typeof FileView>;
export const FileList = z.object({ runId: z.string(), files: z.array(FileView.extend({ download: z.string() })) });
export type FileList = z.infer<typeof FileList>;
export const UploadView = FileView.extend({ fileId: z.string() });
export type UploadView = z.infer<typeof UploadView>;

/** A task of a run: its result previewed (a view holds many tasks; GET links.result gives the whole). */
export const TaskView = z.object({
  iteration: z.number().int(),
  stepIndex: z.number().int(),
  taskId: z.string(),
  title: z.string(),
  status: z.enum(["pending", "succeeded", "failed"]),
  result: z
    .string()
    .nullable()
    .describe(
      "The result's beginning, at most 4,000 UTF-8 bytes, cut between two characters; when cut (resultCut) it ends with a note saying how many bytes it shows of how many. Null while the task runs.",
    ),
  resultBytes: z.number().int().nullable().describe("The whole result's size in UTF-8 bytes."),
  resultCut: z.boolean().describe("Whether result shows only the beginning: the whole is at links.result."),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  /** The executor stopped at its round budget (its result says what was done and what was not). */
  stopReason: z.string().optional(),
  files: z.array(z.string()).describe("The names of the files the task's tools wrote (see files)."),
  links: z.object({ result: z.string().describe("GET: the task's whole result (text/markdown, or a redirect to its file).") }),
});
export type TaskView = z.infer<typeof TaskView>;

/** `GET /v1/runs/{id}/tasks`: the run's tasks after a cursor, in step then task order. */
export const TaskPage = z.object({
  runId: z.string(),
  tasks: z.array(TaskView),
  taskCount: z.number().int(),
  nextCursor: z.string().nullable(),
});
export type TaskPage = z.infer<typeof TaskPage>;

/** `GET /v1/runs/{id}/tasks/{taskId}/result` with `Accept: application/json`: the whole result, or a short-lived link to its file. */
export const TaskResultView = z.object({
  taskId: z.string(),
  bytes: z.number().int(),
  text: z.string().optional().describe("The whole result, when the task's record holds it."),
  url: z.string().optional().describe("A short-lived link to the run file holding the whole result (no key needed)."),
});
export type TaskResultView = z.infer<typeof TaskResultView>;

export const RunView = z.object({
  runId: z.string(),
  sessionId: z.string(),
  status: RunStatus,
  /** While queued behind another run of its session: that run. */
  queuedBehind: z.string().nullable(),
  requestedMode: RequestedMode,
  mode: z.enum(["answer", "react", "plan_solve"]).nullable(),
  /** While running: what it waits for, when it is not working (a model call waiting to be retried). */
  statusDetail: z.string().nullable(),
  input: z.string(),
  metadata: z.record(z.string(), z.string()),
  plan: Plan.nullable(),
  tasks: z
    .array(TaskView)
    .describe("A page of the run's tasks: the first taskCount ones, fewer when their JSON would pass the view's byte budget."),
  taskCount: z.number().int().describe("How many tasks the run has."),
  nextTasksCursor: z.string().nullable().describe("Where GET /v1/runs/{id}/tasks?cursor= goes on; null when the page holds the last task."),
  approval: ApprovalPolicy,
  /** The saved agent the run named, the exact version it resolved, and its tool allow-list (null: the whole catalogue). */
  agent: z.object({ name: z.string(), version: z.number().int(), tools: z.array(z.string()).nullable() }).nullable(),
  /** The operator's instructions its agents follow (the tenant's, the saved agent's, the run's). */
  instructions: z.string().nullable(),
  pendingInterrupts: z.array(InterruptView),
  interrupts: z.array(InterruptView),
  result: z.string().nullable(),
  /** Why the run stopped before its work was done (a round or plan budget); its result says what was and was not done. */
  stopReason: z.string().optional(),
  /** The run this one replays from its journal (GET /v1/runs/{id}/replay says what it found). */
  replayOf: z.string().optional(),
  /** The run this one forks, and where: its journal reused before that round of that agent scope. */
  forkOf: z.object({ runId: z.string(), at: z.object({ scope: z.string(), round: z.number().int() }) }).optional(),
  /** The forks of this run, oldest first: each a run in the same session, forked at that round of that agent scope. */
  forks: z.array(
    z.object({ runId: z.string(), at: z.object({ scope: z.string(), round: z.number().int() }), status: RunStatus, createdAt: z.string() }),
  ),
  /** The online eval's scores of the ended run, or why it was not scored; null until one ran (or if none is set up). */
  evaluation: RunEvaluation.nullable(),
  files: z.array(FileView),
  error: RunError.nullable(),
  usage: RunUsage,
  estimatedCostUsd: z.number().optional(),
  /** Its token and cost budgets and what it spent (null: none). */
  budget: RunBudgetView.nullable(),
  executionArn: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  endedAt: z.string().nullable(),
  links: RunLinks,
});
export type RunView = z.infer<typeof RunView>;

/** A line of `GET /v1/runs`: the run view's headline fields (its input cut at 200 characters) and the estimated cost (none for a model with no price). */
export const RunSummary = RunView.pick({
  runId: true,
  sessionId: true,
  status: true,
  queuedBehind: true,
  requestedMode: true,
  mode: true,
  input: true,
  usage: true,
  createdAt: true,
  updatedAt: true,
  endedAt: true,
}).extend({
  estimatedCostUsd: z.number().optional(),
  /** The session's title, on the run whose turn it was made from: lists show it in place of the input. */
  title: z.string().optional(),
});
export type RunSummary = z.infer<typeof RunSummary>;

export const RunList = z.object({ runs: z.array(RunSummary), nextCursor: z.string().nullable() });
export type RunList = z.infer<typeof RunList>;

const SessionSummary = z.object({
  sessionId: z.string(),
  /** Made by a short model call after the session's first answered turn; absent until then. */
  title: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  lastRunId: z.string(),
});
export const SessionList = z.object({ sessions: z.array(SessionSummary), nextCursor: z.string().nullable() });
export type SessionList = z.infer<typeof SessionList>;

export const SessionView = z.object({
  sessionId: z.string(),
  /** Made after the session's first answered turn (null until then, or when titles are off). */
  title: z.string().nullable(),
  /** The run in flight in the session (null when idle), and the runs waiting for it, in submission order. */
  activeRunId: z.string().nullable(),
  waitingRunIds: z.array(z.string()),
  messages: z.array(
    z.object({ seq: z.number().int(), role: z.enum(["user", "assistant"]), content: z.string(), runId: z.string(), at: z.string() }),
  ),
});
export type SessionView = z.infer<typeof SessionView>;

const RunEventView = z.intersection(EventBody, z.object({ seq: z.number().int(), at: z.string() }));
export const EventList = z.object({ runId: z.string(), events: z.array(RunEventView), next: z.object({ after: z.number().int() }) });

export const Settings = z.object({
  multitask: z.enum(["reject", "enqueue", "interrupt", "rollback"]),
  instructions: z.string().optional(),
  onlineEvals: OnlineEvals.optional(),
  toolFailures: ToolFailures.optional(),
});
export type Settings = z.infer<typeof Settings>;

export const CancelResponse = z.object({ runId: z.string(), status: z.literal("cancelled") });
export type CancelResponse = z.infer<typeof CancelResponse>;

export const StreamToken = z.object({ token: z.string(), expiresAt: z.string() });
export type StreamToken = z.infer<typeof StreamToken>;

export const ToolList = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      access: z.enum(["read", "write"]),
      asksUser: z.boolean(),
      parameters: z.record(z.string(), z.unknown()),
    }),
  ),
});
export type ToolList = z.infer<typeof ToolList>;

export const WebhookDeliveries = z.object({
  runId: z.string(),
  webhook: z.object({ url: z.string(), events: z.array(z.string()).optional() }).nullable(),
  deliveries: z.array(
    z.object({
      deliveryId: z.string(),
      runId: z.string(),
      type: z.string(),
      url: z.string(),
      status: z.enum(["pending", "delivered", "dead", "disabled"]),
      attempts: z.array(
        z.object({
          attempt: z.number().int(),
          at: z.string(),
          ok: z.boolean(),
          status: z.number().int().optional(),
          error: z.string().optional(),
          durationMs: z.number(),
        }),
      ),
      /** When the next attempt is due, while the delivery is pending after a failed one. */
      nextAttemptAt: z.string().optional(),
      createdAt: z.string(),
      updatedAt: z.string(),
    }),
  ),
});
export type WebhookDeliveries = z.infer<typeof WebhookDeliveries>;
export const RedeliverResponse = z.object({ deliveryId: z.string(), status: z.literal("pending") });
export const WebhookSecrets = z.object({
  secrets: z.array(z.object({ secret: z.string(), createdAt: z.string(), expiresAt: z.string().optional() })),
});

export const ToolSourceView = z.object({
  name: z.string(),
  url: z.string(),
  /** Header names; values are never shown. */
  headers: z.record(z.string(), z.literal("***")),
  allowedTools: z.array(z.string()).optional(),
  access: z.record(z.string(), z.enum(["read", "write"])).optional(),
  tools: z.array(z.object({ name: z.string(), tool: z.string(), description: z.string(), access: z.enum(["read", "write"]) })),
  createdAt: z.string(),
});
export type ToolSourceView = z.infer<typeof ToolSourceView>;

export const Health = z.object({ status: z.enum(["ok", "unavailable"]), version: z.string(), checks: z.record(z.string(), z.string()) });
