import type { GenAiSpan } from "../contracts/traces.js";
import type { TraceExport } from "../ports/traces.js";

/** The trace export in memory: every run's spans sent, in order. */
export class MemoryTraces implements TraceExport {
  readonly sent: GenAiSpan[][] = [];

  constructor(readonly active = true) {}

  async send(spans: GenAiSpan[]): Promise<void> {
    this.sent.push(structuredClone(spans));
  }
}
