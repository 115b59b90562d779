import { randomBytes } from "node:crypto";
import type { AgentRole, EventBody } from "../contracts/events.js";
import type { NotifyMessage } from "../contracts/notify.js";
import type { ModelWait } from "../contracts/webhook.js";
import { errorMessage } from "../errors.js";
import type { TextGuard } from "../guardrails/textGuard.js";
import { DeltaCoalescer } from "../llm/deltaCoalescer.js";
import type { ChatRequest } from "../llm/types.js";
import { logger } from "../observability.js";
import type { Ports } from "../ports/index.js";

type Source = { agent: AgentRole; taskId?: string };

/** The handlers of one streamed model call, and the end of its event writes. */
export interface TextStream extends Required<Pick<ChatRequest, "onText" | "onReasoning" | "onRetry">> {
  /** Writes what is buffered; resolves when every event of the call was written. */
  close(): Promise<void>;
}

/**
 * Streams a model call's text to clients as `agent.delta` events of `source` (placeholders
 * restored with `restore`) and its reasoning — models that think aloud — as `agent.reasoning`
 * events, which are shown to people but never kept in memory or sent back to a model.
 *
 * A retry of the call is told as it happens: `agent.withdrawn` first when the broken reply had
 * streamed text (readers drop it; what was not written yet never is), then `model.retrying`, and
 * the run's `modelWait` says it waits until the call answers (then it is cleared). The first retry
 * of the call also goes on the notification queue, once: the progress webhook and A2A push of
 * this waiting spell are sent from there, never from the call's own loop.
 *
 * With output guardrails (`guard`), the text passes a short hold-back window first
 * (shared/guardrails/holdBack.ts): a redacted or blocked span never reaches a client.
 */
export function textStream(
  ports: Pick<Ports, "events" | "runs" | "notifyQueue">,
  runId: string,
  source: Source,
  restore?: (text: string) => string,
  guard?: TextGuard,
): TextStream {
  // Every write waits for the last retry's events, so a retried reply's text never comes before them.
  let retryEvents: Promise<unknown> = Promise.resolve();
  let waited = false;
  /** The waiting spell's message while the queue has not taken it (sent again when the call ends). */
  let unsent: Promise<NotifyMessage | undefined> = Promise.resolve(undefined);
  const append = (type: "agent.delta" | "agent.reasoning") => (text: string) =>
    retryEvents.then(() => ports.events.append(runId, [{ type, data: { ...source, text } } as EventBody]));
  const deltas = new DeltaCoalescer(append("agent.delta"), { restore });
  const reasoning = new DeltaCoalescer(append("agent.reasoning"));
  const held = guard?.holdBack(deltas.push);
  return {
    onText: held ? held.push : deltas.push,
    onReasoning: reasoning.push,
    onRetry: (retry) => {
      held?.discard();
      const [text, thought] = [deltas.discard(), reasoning.discard()];
      const events: EventBody[] = [
        ...(text.pushed || thought.pushed ? [{ type: "agent.withdrawn" as const, data: { ...source, reason: retry.reason } }] : []),
        { type: "model.retrying", data: { ...source, ...retry } },
      ];
      const at = new Date();
      const wait = { ...source, ...retry, retryAt: new Date(at.getTime() + retry.waitMs).toISOString() };
      // Subscribers hear of a waiting spell once, at its first retry; the queue keeps it however the call ends.
      if (!waited) unsent = queueWaiting(ports, waitingMessage(runId, at, wait));
      waited = true;
      // Progress is best effort: a failed write never fails the call.
      retryEvents = Promise.all([
        Promise.all([text.written, thought.written])
          .then(() => Promise.all([ports.events.append(runId, events), ports.runs.update(runId, { modelWait: wait }, ["running"])]))
          .catch(() => undefined),
        unsent,
      ]);
    },
    close: async () => {
      held?.close();
      await Promise.all([deltas.close(), reasoning.close(), retryEvents]);
      // A spell the queue refused once is offered again, late rather than lost.
      const left = await unsent;
      if (left) await queueWaiting(ports, left);
      if (waited) await ports.runs.update(runId, { modelWait: null }, ["running"]).catch(() => undefined);
    },
  };
}

/** The waiting spell's message for the notifier: its id is the progress webhook's webhook-id. */
function waitingMessage(runId: string, at: Date, modelWait: ModelWait): NotifyMessage {
  const waitId = `msg_${runId}_wait_${at.getTime().toString(36)}${randomBytes(3).toString("hex")}`;
  return { kind: "model_waiting", runId, waitId, at: at.toISOString(), modelWait };
}

/** Puts the message on the queue; undefined once it is there, else the message (the failure logged). */
function queueWaiting(ports: Pick<Ports, "notifyQueue">, message: NotifyMessage): Promise<NotifyMessage | undefined> {
  return ports.notifyQueue.send(message).then(
    () => undefined,
    (error) => {
      logger.warn("the model wait's notification was not queued", { runId: message.runId, error: errorMessage(error) });
      return message;
    },
  );
}
