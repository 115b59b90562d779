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

/** What `webhook` in a run request looks like; `events` defaults to all of them. */
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

/** The first `max` UTF-16 units, never splitting a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
  return text.slice(0, end);
}
