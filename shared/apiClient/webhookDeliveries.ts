import type { WebhookDeliveries } from "../contracts/responses.js";

/**
 * A run's webhook deliveries in words, as the CLI and the console show them: each delivery's state
 * (with when its next retry is due), then each attempt and how it went.
 */
export type Delivery = WebhookDeliveries["deliveries"][number];
export type DeliveryAttempt = Delivery["attempts"][number];

/** "run.succeeded: pending, 2 attempts, next retry in 25 s" */
export function deliveryHeadline(delivery: Delivery, now = Date.now()): string {
  const tries = `${delivery.attempts.length} attempt${delivery.attempts.length === 1 ? "" : "s"}`;
  const next =
    delivery.status === "pending" && delivery.nextAttemptAt
      ? `, next retry ${retryIn(Date.parse(delivery.nextAttemptAt) - now)}`
      : delivery.status === "pending" && delivery.attempts.length === 0
        ? ", being sent"
        : "";
  return `${delivery.type}: ${STATES[delivery.status]}, ${tries}${next}`;
}

/** "#2 ✗ HTTP 500 (12 ms)" */
export function attemptLine(attempt: DeliveryAttempt): string {
  return `#${attempt.attempt} ${attempt.ok ? "✓" : "✗"} ${attempt.ok ? `HTTP ${attempt.status ?? 200}` : (attempt.error ?? `HTTP ${attempt.status}`)} (${Math.round(attempt.durationMs)} ms)`;
}

const STATES: Record<Delivery["status"], string> = {
  pending: "pending",
  delivered: "delivered",
  dead: "given up (every attempt failed; redeliver it with POST …/webhooks/{deliveryId}/redeliver)",
  disabled: "not sent (the endpoint is disabled)",
};

const retryIn = (ms: number) => (ms <= 0 ? "due now" : ms < 60_000 ? `in ${Math.ceil(ms / 1000)} s` : `in ${Math.ceil(ms / 60_000)} min`);
