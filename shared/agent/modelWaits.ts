import { randomBytes } from "node:crypto";
import type { AgentRole, EventBody } from "../contracts/events.js";
import type { NotifyMessage } from "../contracts/notify.js";
import type { RunRecord } from "../contracts/run.js";
import { hearsOfModelWaits, type ModelWait } from "../contracts/webhook.js";
import { errorMessage } from "../errors.js";
import type { ModelRetry } from "../llm/types.js";
import { logger } from "../observability.js";
import type { Ports } from "../ports/index.js";
import type { ModelCallWaits } from "../ports/tools.js";

type Source = { agent: AgentRole; taskId?: string };

/** What reporting a model call's retries writes: the run's events and its `modelWait`, the notification queue (and the run, when its subscription is not known). */
export type ModelWaitPorts = Pick<Ports, "events" | "runs" | "notifyQueue">;

/** The run's subscription as the caller read it with the run (null: it has none); undefined: not read, so it is read at a waiting spell's first retry. */
export type KnownWebhook = RunRecord["webhook"] | null | undefined;

/**
 * One model call's retries as the run's watchers hear of them, whoever made the call (an agent's
 * turn, the report writer): each retry is a `model.retrying` event and the run's `modelWait` says
 * until when it waits (cleared when the call ends). The first retry of the call (its waiting spell)
 * goes on the notification queue once, for the progress webhook and A2A push, only when the run's
 * subscription hears of model waits: the notifier would find nothing to send otherwise.
 */
export class ModelWaits implements ModelCallWaits {
  private waited = false;
  /** The waiting spell's message while the queue has not taken it (sent again when the call ends). */
  private unsent: Promise<NotifyMessage | undefined> = Promise.resolve(undefined);

  constructor(
    private readonly ports: ModelWaitPorts,
    private readonly runId: string,
    private readonly source: Source,
    private readonly webhook?: KnownWebhook,
  ) {}

  /**
   * Reports a retry: `withdrawn` (what takes back the broken reply's text) and `model.retrying`,
   * once `before` (that text's last write) is done. Resolves when the events are written (best
   * effort: a failed write never fails the call) and the spell is queued or refused.
   */
  retried(retry: ModelRetry, options: { before?: Promise<unknown>; withdrawn?: EventBody[] } = {}): Promise<unknown> {
    const at = new Date();
    const wait = { ...this.source, ...retry, retryAt: new Date(at.getTime() + retry.waitMs).toISOString() };
    // Subscribers hear of a waiting spell once, at its first retry; the queue keeps it however the call ends.
    if (!this.waited) this.unsent = this.queueIfHeard(waitingMessage(this.runId, at, wait));
    this.waited = true;
    const events: EventBody[] = [...(options.withdrawn ?? []), { type: "model.retrying", data: { ...this.source, ...retry } }];
    return Promise.all([
      Promise.resolve(options.before)
        .then(() =>
          Promise.all([this.ports.events.append(this.runId, events), this.ports.runs.update(this.runId, { modelWait: wait }, ["running"])]),
        )
        .catch(() => undefined),
      this.unsent,
    ]);
  }

  /** The call ended: a spell the queue refused once is offered again (late rather than lost), and the run no longer waits. */
  async close(): Promise<void> {
    const left = await this.unsent;
    if (left) await queueWaiting(this.ports, left);
    if (this.waited) await this.ports.runs.update(this.runId, { modelWait: null }, ["running"]).catch(() => undefined);
  }

  /** Queues the spell when the run's subscription hears of it; undefined once queued or not wanted, else the message. */
  private async queueIfHeard(message: NotifyMessage): Promise<NotifyMessage | undefined> {
    const heard =
      this.webhook !== undefined
        ? hearsOfModelWaits(this.webhook ?? undefined)
        : // One read per spell, not per retry; a failed read queues it, and the notifier decides.
          await this.ports.runs.get(this.runId).then(
            (run) => hearsOfModelWaits(run?.webhook),
            () => true,
          );
    return heard ? queueWaiting(this.ports, message) : undefined;
  }
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
