import type { AgentRole, EventBody } from "../contracts/events.js";
import { DeltaCoalescer } from "../llm/deltaCoalescer.js";
import type { ChatRequest } from "../llm/types.js";
import type { Ports } from "../ports/index.js";

type Source = { agent: AgentRole; taskId?: string };

/** The handlers of one streamed model call, and the end of its event writes. */
export interface TextStream extends Required<Pick<ChatRequest, "onText" | "onReasoning">> {
  /** Writes what is buffered; resolves when every event of the call was written. */
  close(): Promise<void>;
}

/**
 * Streams a model call's text to clients as `agent.delta` events of `source` (placeholders
 * restored with `restore`) and its reasoning — models that think aloud — as `agent.reasoning`
 * events, which are shown to people but never kept in memory or sent back to a model.
 */
export function textStream(ports: Pick<Ports, "events">, runId: string, source: Source, restore?: (text: string) => string): TextStream {
  const append = (type: "agent.delta" | "agent.reasoning") => (text: string) =>
    ports.events.append(runId, [{ type, data: { ...source, text } } as EventBody]);
  const deltas = new DeltaCoalescer(append("agent.delta"), { restore });
  const reasoning = new DeltaCoalescer(append("agent.reasoning"));
  return {
    onText: deltas.push,
    onReasoning: reasoning.push,
    close: () => Promise.all([deltas.close(), reasoning.close()]).then(() => undefined),
  };
}
