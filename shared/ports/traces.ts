import type { GenAiSpan } from "../contracts/traces.js";

/**
 * Where an ended run's GenAI spans are sent, beside `GET /v1/runs/{id}/trace` which anyone may
 * read: on AWS, X-Ray through the Lambda's X-Ray daemon (shared/tracing/xrayTraces.ts), wherever
 * AWS_XRAY_DAEMON_ADDRESS names one; nowhere when none is named. Fake: shared/testing/memoryTraces.ts.
 */
export interface TraceExport {
  /** False where there is nowhere to send them: the run's events are then not even read. */
  readonly active: boolean;
  /** Sends one run's spans, parents before children. Sending the same spans again replaces them (their ids are the run's). */
  send(spans: GenAiSpan[]): Promise<void>;
}
