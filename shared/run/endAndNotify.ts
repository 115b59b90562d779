/**
 * What the notify function does with each message: an execution that ended settles its run and
 * hands the run's session to the next waiting run; every ending and every wait for a person is then
 * sent as a signed webhook (and as an A2A push), retried on the queue. A model call that waits to
 * be retried is progress, sent once per waiting spell to the subscriptions that asked for it.
 */
import type { ExecutionStatusEvent, NotifyMessage } from "../contracts/notify.js";
import type { A2APush, RunRecord } from "../contracts/run.js";
import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import {
  buildModelWaitPayload,
  buildWebhookPayload,
  hearsOfModelWaits,
  type NotifiedStatus,
  subscribedTo,
  type WebhookEventType,
  type WebhookInterrupt,
  webhookEventType,
} from "../contracts/webhook.js";
import { errorMessage } from "../errors.js";
import { assertDeliverableUrl, WebhookUrlError } from "../net/ssrfGuard.js";
import { countMetric } from "../observability.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import type { SecretCipher } from "../ports/secretCipher.js";
import type { Delivery } from "../ports/webhooks.js";
import { deliverOnce } from "../webhooks/deliver.js";
import { DEFAULT_RETRY_SCHEDULE, FAST_RETRY_SCHEDULE, nextAttemptDelayMs } from "../webhooks/retryPolicy.js";
import { type EndRunPorts, reconcileExecutionEnd } from "./lifecycle.js";
import { type OnlineEvalPorts, queueScoring, scoreRun } from "./onlineEvals.js";
import { exportRunTrace, type RunTracePorts } from "./runTrace.js";
import { leaveSession, type SessionQueuePorts } from "./sessionQueue.js";
import { recordStateTransitions } from "./stateTransitions.js";

/**
 * The A2A mapping and its SDK (37 KB of the notify function's code), loaded by the first push to an
 * A2A client's config: a run without one never needs them, so the notify function's cold start
 * leaves them out. Its members are called on the module (`a2a.openPush`), not destructured, so the
 * IAM-coverage reading of the code follows them (opening a push's token decrypts with KMS).
 */
const a2aMapping = () => import("../protocols/a2a.js");

/** Sending webhooks: the run and its interrupts, delivery records and secrets, the queue for retries, the cipher an A2A push's token is sealed with. */
export type DeliveryPorts = Pick<Ports, "runs" | "interrupts" | "files" | "webhooks" | "notifyQueue"> &
  SettingsOf<"webhooks"> & { secrets: SecretCipher };

/** Settling a run whose execution ended touches what ending a run does, counts its transitions, queues its scoring and sends its trace. */
export type NotifyPorts = DeliveryPorts & EndRunPorts & SessionQueuePorts & OnlineEvalPorts & RunTracePorts & Pick<Ports, "traces">;

/**
 * Step Functions says an execution ended: settle the run (a crashed or aborted execution still
 * ends its run), hand its session to the next waiting run, send its terminal webhook and its trace.
 */
export async function onExecutionStatus(ports: NotifyPorts, event: ExecutionStatusEvent): Promise<void> {
  const { detail } = event;
  if (detail.status === "RUNNING" || detail.status === "PENDING_REDRIVE") return;
  const runId = detail.name.replace(/-\d+$/, "");
  const current = await ports.runs.get(runId);
  if (!current) return; // not one of ours
  // An execution the run continued from (its history budget was spent) ends as the next one starts.
  if (current.executionArn !== detail.executionArn) return;
  await Promise.all([
    reconcileExecutionEnd(ports, runId, detail),
    // Counted once: a read of the ended run may have counted it already (a resumed run's count is removed).
    current.stateTransitions === undefined ? recordStateTransitions(ports, runId, detail.executionArn) : undefined,
  ]);
  const run = await ports.runs.get(runId);
  if (!run) throw new Error(`Run ${runId} is gone: it was read a moment ago.`);
  if (TERMINAL_STATUSES.has(run.status)) await leaveSession(ports, run);
  await notify(ports, run, run.status as NotifiedStatus, endingId(run));
  await queueScoring(ports, run);
  if (TERMINAL_STATUSES.has(run.status)) await exportRunTrace(ports, run);
}

/**
 * The webhook-id of a run's ending: the same for every attempt at this ending, another for the
 * ending of a resumed run (receivers deduplicate by it).
 */
function endingId(run: RunRecord): string {
  return `msg_${run.runId}_${run.status}${run.endedAt ? `_${Date.parse(run.endedAt).toString(36)}` : ""}`;
}

export async function onQueueMessage(ports: NotifyPorts, message: NotifyMessage): Promise<void> {
  if (message.kind === "score") {
    await scoreRun(ports, message.runId);
    return;
  }
  if (message.kind === "ended") {
    // A run ended without an execution to report it (cancelled while waiting in its session's queue).
    const run = await ports.runs.get(message.runId);
    if (!run || !TERMINAL_STATUSES.has(run.status)) return;
    await leaveSession(ports, run);
    await notify(ports, run, run.status as NotifiedStatus, endingId(run));
    await exportRunTrace(ports, run);
    return;
  }
  if (message.kind === "awaiting_input") {
    const run = await ports.runs.get(message.runId);
    const interrupt = run && (await ports.interrupts.get(message.runId, message.interruptId));
    if (!run || !interrupt) return;
    const summary: WebhookInterrupt = {
      interruptId: interrupt.interruptId,
      kind: interrupt.kind,
      summary: interrupt.summary.split("\n")[0],
    };
    await notify(ports, run, "awaiting_input", `msg_${run.runId}_${interrupt.interruptId}`, [summary]);
    return;
  }
  if (message.kind === "model_waiting") {
    const run = await ports.runs.get(message.runId);
    if (run) await notifyModelWait(ports, run, message);
    return;
  }
  const waitMs = message.notBefore ? Date.parse(message.notBefore) - Date.now() : 0;
  if (waitMs > 1_000) return ports.notifyQueue.send(message, waitMs); // hours-long backoff, 15 minutes at a time
  const delivery = await ports.webhooks.getDelivery(message.runId, message.deliveryId);
  const run = await ports.runs.get(message.runId);
  if (delivery && run) await attempt(ports, run, delivery, message.attempt);
}

/** A status change's webhook, to a subscription that asked for it. */
async function notify(
  ports: DeliveryPorts,
  run: RunRecord,
  status: NotifiedStatus,
  deliveryId: string,
  interrupts?: WebhookInterrupt[],
): Promise<void> {
  const subscription = run.webhook;
  if (!subscription || !run.links) return;
  const type = webhookEventType(status);
  if (!subscribedTo(subscription, type)) return;
  const payload = buildWebhookPayload({
    runId: run.runId,
    status,
    sessionId: run.sessionId,
    result: status === "succeeded" ? run.result : undefined,
    error: run.error,
    interrupts,
    links: run.links,
    metadata: run.metadata,
    occurredAt: run.endedAt ?? run.updatedAt,
  });
  // An A2A client's config gets the A2A task (its state, pause or artifacts) instead, signed the same way.
  const body = subscription.a2a ? await a2aPushBody(ports, run, subscription.a2a) : JSON.stringify(payload);
  await deliverNew(ports, run, { deliveryId, type, url: subscription.url, body });
}

/**
 * A model call's first retry of a waiting spell: run.waiting_on_model to a subscription that named
 * it; to an A2A client's push config, a working status update saying so (A2A pushes task updates),
 * unless the task has ended meanwhile (an update after its end would say it works again).
 */
async function notifyModelWait(
  ports: DeliveryPorts,
  run: RunRecord,
  { waitId, at, modelWait }: Extract<NotifyMessage, { kind: "model_waiting" }>,
): Promise<void> {
  const subscription = run.webhook;
  if (!subscription || !run.links || !hearsOfModelWaits(subscription)) return;
  const type = "run.waiting_on_model";
  let body: string;
  if (subscription.a2a) {
    if (TERMINAL_STATUSES.has(run.status)) return;
    const a2a = await a2aMapping();
    body = a2a.pushUpdateBody(subscription.a2a, a2a.workingUpdate(run, waitId, at, a2a.modelRetryLine(modelWait)));
  } else {
    body = JSON.stringify(buildModelWaitPayload({ ...run, links: run.links, modelWait, at }));
  }
  await deliverNew(ports, run, { deliveryId: waitId, type, url: subscription.url, body });
}

/** Records the message once (its id is the webhook-id, stable across retries) and makes its first attempt, unless made already. */
async function deliverNew(
  ports: DeliveryPorts,
  run: RunRecord,
  message: { deliveryId: string; type: WebhookEventType; url: string; body: string },
): Promise<void> {
  const now = new Date().toISOString();
  const delivery = await ports.webhooks.createDelivery({
    ...message,
    runId: run.runId,
    status: "pending",
    attempts: [],
    createdAt: now,
    updatedAt: now,
  });
  if (delivery.attempts.length === 0) await attempt(ports, run, delivery, 1);
}

/** An A2A client's push: the run's task (its state, pause or artifacts). */
async function a2aPushBody(ports: DeliveryPorts, run: RunRecord, push: A2APush): Promise<string> {
  const [a2a, interrupts, files] = await Promise.all([a2aMapping(), ports.interrupts.list(run.runId), ports.files.list(run.runId)]);
  return a2a.pushBody(push, a2a.taskOf(run, interrupts, files, a2a.apiOf(run)));
}

/** The headers an A2A client's push config asks for (its token, opened). */
async function a2aPushHeaders(ports: DeliveryPorts, tenantId: string, push: A2APush): Promise<Record<string, string>> {
  const a2a = await a2aMapping();
  return a2a.pushHeaders(await a2a.openPush(ports.secrets, tenantId, push));
}

/** One delivery attempt, then: done, retry later (backoff, Retry-After), disable (410) or dead-letter. */
async function attempt(ports: DeliveryPorts, run: RunRecord, delivery: Delivery, attemptNumber: number): Promise<void> {
  if (delivery.status !== "pending" || delivery.attempts.some((a) => a.attempt === attemptNumber)) return; // delivered once already
  const { settings, webhooks } = ports;
  const at = new Date().toISOString();
  if (await webhooks.isDisabled(run.tenantId, delivery.url)) {
    return webhooks.recordAttempt(
      run.runId,
      delivery.deliveryId,
      { attempt: attemptNumber, at, ok: false, error: "endpoint disabled after 410 Gone", durationMs: 0 },
      "disabled",
    );
  }
  let result: Awaited<ReturnType<typeof deliverOnce>>;
  try {
    // Checked again on every attempt: DNS may have changed since the run was submitted.
    const addresses = await assertDeliverableUrl(delivery.url, settings.webhooks.policy);
    const secrets = (await webhooks.secrets(run.tenantId)).map((s) => s.secret);
    result = await deliverOnce({
      url: delivery.url,
      id: delivery.deliveryId,
      timestamp: Math.floor(Date.now() / 1000),
      body: delivery.body,
      secrets,
      timeoutMs: settings.webhooks.timeoutMs,
      headers:
        run.webhook?.a2a && run.webhook.url === delivery.url ? await a2aPushHeaders(ports, run.tenantId, run.webhook.a2a) : undefined,
      pinnedAddresses: addresses,
    });
  } catch (error) {
    const permanent = error instanceof WebhookUrlError && error.code !== "webhook_host_unresolvable";
    result = { ok: false, error: errorMessage(error), durationMs: 0 };
    if (permanent) {
      await webhooks.recordAttempt(
        run.runId,
        delivery.deliveryId,
        { attempt: attemptNumber, at, ok: false, error: result.error, durationMs: 0 },
        "dead",
      );
      return ports.notifyQueue.deadLetter({
        kind: "deliver",
        runId: run.runId,
        deliveryId: delivery.deliveryId,
        attempt: attemptNumber,
        reason: result.error ?? "the delivery failed",
      });
    }
  }
  const record = { attempt: attemptNumber, at, ok: result.ok, status: result.status, error: result.error, durationMs: result.durationMs };
  countMetric(result.ok ? "WebhookDeliveries" : "WebhookFailedAttempts");
  if (result.ok) return webhooks.recordAttempt(run.runId, delivery.deliveryId, record, "delivered");

  const schedule = settings.webhooks.retrySchedule === "fast" ? FAST_RETRY_SCHEDULE : DEFAULT_RETRY_SCHEDULE;
  const next = nextAttemptDelayMs(
    attemptNumber - (delivery.seriesStart ?? 0),
    { status: result.status, retryAfter: result.retryAfter },
    Math.random,
    schedule,
  );
  if (next === "disable") {
    await webhooks.disable(run.tenantId, delivery.url);
    return webhooks.recordAttempt(run.runId, delivery.deliveryId, record, "disabled");
  }
  if (next === "give_up") {
    await webhooks.recordAttempt(run.runId, delivery.deliveryId, record, "dead");
    const reason = `no success after ${attemptNumber - (delivery.seriesStart ?? 0)} attempts: ${result.error ?? `HTTP ${result.status}`}`;
    return ports.notifyQueue.deadLetter({
      kind: "deliver",
      runId: run.runId,
      deliveryId: delivery.deliveryId,
      attempt: attemptNumber,
      reason,
    });
  }
  const notBefore = new Date(Date.now() + next).toISOString();
  await webhooks.recordAttempt(run.runId, delivery.deliveryId, record, "pending", notBefore);
  await ports.notifyQueue.send(
    { kind: "deliver", runId: run.runId, deliveryId: delivery.deliveryId, attempt: attemptNumber + 1, notBefore },
    next,
  );
}
