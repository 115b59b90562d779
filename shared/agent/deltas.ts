import type { AgentRole, EventBody } from "../contracts/events.js";
import type { TextGuard } from "../guardrails/textGuard.js";
import { DeltaCoalescer } from "../llm/deltaCoalescer.js";
import type { ChatRequest } from "../llm/types.js";
import { type KnownWebhook, type ModelWaitPorts, ModelWaits } from "./modelWaits.js";

type Source = { agent: AgentRole; taskId?: string };

/** The handlers of one streamed model call, and the end of its event writes. */
export interface TextStream extends Required<Pick<ChatRequest, "onText" | "onReasoning" | "onRetry">> {
  /** Writes what is buffered; resolves when every event of the call was written. */
  close(): Promise<void>;
}

/** Where a stream's text goes beyond the run's events, and who hears of its retries. */
export interface TextStreamOptions {
  /** Placeholders back to what people see (the model's window). */
  restore?: (text: string) => string;
  /** The run's output guardrails: the text passes their hold-back window first. */
  guard?: TextGuard;
  /** The run's subscription, when the caller read the run (modelWaits.ts): a spell nobody hears of is not queued. */
  webhook?: KnownWebhook;
}

/**
 * Streams a model call's text to clients as `agent.delta` events of `source` (placeholders
 * restored with `restore`) and its reasoning — models that think aloud — as `agent.reasoning`
 * events, which are shown to people but never kept in memory or sent back to a model.
 *
 * A retry of the call is told as it happens: `agent.withdrawn` first when the broken reply had
 * streamed text (readers drop it; what was not written yet never is), then the retry as every
 * model call's is (modelWaits.ts: `model.retrying`, the run's `modelWait`, the waiting spell on
 * the notification queue for the subscriptions that hear of it).
 *
 * With output guardrails (`guard`), the text passes a short hold-back window first
 * (shared/guardrails/holdBack.ts): a redacted or blocked span never reaches a client.
 */
export function textStream(ports: ModelWaitPorts, runId: string, source: Source, options: TextStreamOptions = {}): TextStream {
  const { restore, guard } = options;
  const waits = new ModelWaits(ports, runId, source, options.webhook);
  // Every write waits for the last retry's events, so a retried reply's text never comes before them.
  let retryEvents: Promise<unknown> = Promise.resolve();
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
      const withdrawn: EventBody[] =
        text.pushed || thought.pushed ? [{ type: "agent.withdrawn", data: { ...source, reason: retry.reason } }] : [];
      retryEvents = waits.retried(retry, { before: Promise.all([text.written, thought.written]), withdrawn });
    },
    close: async () => {
      held?.close();
      await Promise.all([deltas.close(), reasoning.close(), retryEvents]);
      await waits.close();
    },
  };
}
