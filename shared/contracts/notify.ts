import * as z from "zod";
import { ModelWait } from "./webhook.js";

/** Messages on the notification queue besides Step Functions' own status-change events. */
export const NotifyMessage = z.discriminatedUnion("kind", [
  /** Try delivering a webhook (again); not before `notBefore` (SQS delays at most 15 minutes). */
  z.object({
    kind: z.literal("deliver"),
    runId: z.string(),
    deliveryId: z.string(),
    attempt: z.number().int().min(1),
    notBefore: z.string().optional(),
  }),
  /** A run started waiting for a person. */
  z.object({ kind: z.literal("awaiting_input"), runId: z.string(), interruptId: z.string() }),
  /**
   * A model call of the run failed and waits to be retried: its first retry of this waiting spell
   * (`waitId` names the spell: the webhook-id of its progress webhook).
   */
  z.object({ kind: z.literal("model_waiting"), runId: z.string(), waitId: z.string(), at: z.iso.datetime(), modelWait: ModelWait }),
  /** A run ended without its execution reporting it (the execution was gone): send its terminal webhook. */
  z.object({ kind: z.literal("ended"), runId: z.string() }),
  /** A sampled run ended: its tenant's online-eval judges score it (shared/run/onlineEvals.ts). */
  z.object({ kind: z.literal("score"), runId: z.string() }),
]);
export type NotifyMessage = z.infer<typeof NotifyMessage>;

/** EventBridge's "Step Functions Execution Status Change" event, as the rule puts it on the queue. */
export const ExecutionStatusEvent = z.object({
  "detail-type": z.literal("Step Functions Execution Status Change"),
  source: z.literal("aws.states"),
  time: z.string().optional(),
  detail: z.object({
    executionArn: z.string(),
    stateMachineArn: z.string(),
    name: z.string(),
    status: z.enum(["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"]),
    error: z.string().nullish(),
    cause: z.string().nullish(),
  }),
});
export type ExecutionStatusEvent = z.infer<typeof ExecutionStatusEvent>;
