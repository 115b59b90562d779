/**
 * The webhook body, in Standard Webhooks' recommended `{type, timestamp, data}` envelope. Kept small
 * (the specification suggests under 20 KB): long text is cut and `links.self` returns it whole.
 */
import * as z from "zod";
import { RunError, RunStatus } from "./run.js";

const WEBHOOK_EVENT_TYPES = [
  "run.succeeded",
  "run.failed",
  "run.cancelled",
  "run.timed_out",
  "run.interrupted",
  "run.awaiting_input",
  "run.blocked",
  "run.budget_exhausted",
  // Progress, sent only to subscriptions that name it: a model call waits to be retried.
  "run.waiting_on_model",
] as const;
const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/** Run statuses that send a webhook: the terminal ones, and waiting for a human. */
export type NotifiedStatus =
  | "succeeded"
  | "failed"
  | "cancelled"
  | "timed_out"
  | "interrupted"
  | "awaiting_input"
  | "blocked"
  | "budget_exhausted";

export const MAX_RESULT_CHARS = 4000;
const MAX_TEXT_CHARS = 1000;

/** The event types a subscription without `events` gets: every status change, no progress. */
const STATUS_EVENT_TYPES: readonly WebhookEventType[] = WEBHOOK_EVENT_TYPES.filter((type) => type !== "run.waiting_on_model");

/** Whether a subscription asked for `type` (one without `events` gets the status changes). */
export function subscribedTo(subscription: { events?: readonly string[] }, type: WebhookEventType): boolean {
  return (subscription.events ?? STATUS_EVENT_TYPES).includes(type);
}

/**
 * Whether a run's subscription hears of its model waits: a webhook that named `run.waiting_on_model`,
 * or an A2A client's push config (as a working update) unless its client deleted it (events: []).
 */
export function hearsOfModelWaits(subscription: { events?: readonly string[]; a2a?: unknown } | undefined): boolean {
  if (!subscription) return false;
  return subscription.a2a ? subscription.events?.length !== 0 : subscribedTo(subscription, "run.waiting_on_model");
}

/** What `webhook` in a run request looks like; `events` defaults to every status change (progress only when named). */
export const WebhookSubscription = z.strictObject({
  url: z.string().min(1).max(2048),
  events: z.array(WebhookEventType).min(1).optional(),
});
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;

export const WebhookInterrupt = z.object({
  interruptId: z.string(),
  kind: z.enum(["plan_approval", "tool_approval", "ask_user", "tool_failure", "budget"]),
  /** One line for the human: the question, the tool to approve, the failure (`summary`, as in the API and events). */
  summary: z.string().max(MAX_TEXT_CHARS).optional(),
});
export type WebhookInterrupt = z.infer<typeof WebhookInterrupt>;

/** A model call's first retry of a waiting spell: which agent (and task), the retry of how many, why, and the wait before it. */
export const ModelWait = z.object({
  agent: z.string(),
  taskId: z.string().optional(),
  attempt: z.number().int(),
  retries: z.number().int(),
  reason: z.string(),
  waitMs: z.number().int(),
  retryAt: z.iso.datetime(),
});
export type ModelWait = z.infer<typeof ModelWait>;

export const WebhookPayload = z.object({
  type: WebhookEventType,
  /** When the event happened; the attempt's time is in the `webhook-timestamp` header. */
  timestamp: z.iso.datetime(),
  data: z.object({
    runId: z.string(),
    status: RunStatus,
    sessionId: z.string(),
    result: z.string().max(MAX_RESULT_CHARS).optional(),
    /** The result was cut: fetch `links.self` for all of it. */
    resultTruncated: z.literal(true).optional(),
    error: RunError.optional(),
    interrupts: z.array(WebhookInterrupt).optional(),
    /** run.waiting_on_model: the model call that waits, why, and when it is tried again. */
    modelWait: ModelWait.optional(),
    links: z.object({ self: z.string(), events: z.string(), stream: z.string() }),
    metadata: z.record(z.string(), z.string()),
  }),
});
export type WebhookPayload = z.infer<typeof WebhookPayload>;

export interface WebhookPayloadInput {
  runId: string;
  status: NotifiedStatus;
  sessionId: string;
  result?: string;
  error?: RunError;
  interrupts?: readonly WebhookInterrupt[];
  links: { self: string; events: string; stream: string };
  metadata: Record<string, string>;
  /** When the status changed; defaults to now. */
  occurredAt?: Date | string;
}

export function webhookEventType(status: NotifiedStatus): WebhookEventType {
  return `run.${status}`;
}

export function buildWebhookPayload(input: WebhookPayloadInput): WebhookPayload {
  const result = input.result === undefined ? undefined : cut(input.result, MAX_RESULT_CHARS);
  const resultTruncated = result !== undefined && result !== input.result;
  return {
    type: webhookEventType(input.status),
    timestamp: new Date(input.occurredAt ?? Date.now()).toISOString(),
    data: {
      runId: input.runId,
      status: input.status,
      sessionId: input.sessionId,
      ...(result !== undefined ? { result } : {}),
      ...(resultTruncated ? { resultTruncated: true as const } : {}),
      ...(input.error ? { error: { code: input.error.code, message: cut(input.error.message, MAX_TEXT_CHARS) } } : {}),
      ...(input.interrupts?.length
        ? {
            interrupts: input.interrupts.map(({ interruptId, kind, summary }) => ({
              interruptId,
              kind,
              ...(summary !== undefined ? { summary: cut(summary, MAX_TEXT_CHARS) } : {}),
            })),
          }
        : {}),
      links: { self: input.links.self, events: input.links.events, stream: input.links.stream },
      metadata: { ...input.metadata },
    },
  };
}

/** run.waiting_on_model: the run works, and a model call of it waits to be retried (`at`: when it failed). */
export function buildModelWaitPayload(
  input: Pick<WebhookPayloadInput, "runId" | "sessionId" | "links" | "metadata"> & { modelWait: ModelWait; at: string },
): WebhookPayload {
  const { reason, ...wait } = input.modelWait;
  return {
    type: "run.waiting_on_model",
    timestamp: new Date(input.at).toISOString(),
    data: {
      runId: input.runId,
      status: "running",
      sessionId: input.sessionId,
      modelWait: { ...wait, reason: cut(reason, MAX_TEXT_CHARS) },
      links: { self: input.links.self, events: input.links.events, stream: input.links.stream },
      metadata: { ...input.metadata },
    },
  };
}

/** The first `max` UTF-16 units, never splitting a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
  return text.slice(0, end);
}
