import type { AgentRole, EventBody } from "../contracts/events.js";
import type { TextGuard } from "../guardrails/textGuard.js";
import { DeltaCoalescer } from "../llm/deltaCoalescer.js";
import type { ChatRequest } from "../llm/types.js";
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
 * the run's `modelWait` says it waits until the call answers (then it is cleared).
 *
 * With output guardrails (`guard`), the text passes a short hold-back window first
 * (shared/guardrails/holdBack.ts): a redacted or blocked span never reaches a client.
 */
export function textStream(
  ports: Pick<Ports, "events" | "runs">,
  runId: string,
  source: Source,
  restore?: (text: string) => string,
  guard?: TextGuard,
): TextStream {
  // Every write waits for the last retry's events, so a retried reply's text never comes before them.
  let retryEvents: Promise<unknown> = Promise.resolve();
  let waited = false;
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
      const wait = { ...source, ...retry, retryAt: new Date(Date.now() + retry.waitMs).toISOString() };
      waited = true;
      // Progress is best effort: a failed write never fails the call.
      retryEvents = Promise.all([text.written, thought.written])
        .then(() => Promise.all([ports.events.append(runId, events), ports.runs.update(runId, { modelWait: wait }, ["running"])]))
        .catch(() => undefined);
    },
    close: async () => {
      held?.close();
      await Promise.all([deltas.close(), reasoning.close(), retryEvents]);
      if (waited) await ports.runs.update(runId, { modelWait: null }, ["running"]).catch(() => undefined);
    },
  };
}
