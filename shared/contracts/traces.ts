/** An attribute value as OpenTelemetry carries it. */
export type AttributeValue = string | number | boolean | string[];

/**
 * One OpenTelemetry span of a run, following the GenAI semantic conventions (built from the run's
 * events by shared/views/genAiTrace.ts; the trace readers and exporters all take this shape).
 */
export interface GenAiSpan {
  /**
   * 16 bytes, hex, every span of a run sharing it: the run's start in epoch seconds (4 bytes) then
   * 12 derived from the run's id, so the same id is a valid X-Ray trace id too (`1-<8>-<24>`).
   */
  traceId: string;
  /** 8 bytes, hex. */
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: "internal" | "client";
  startTime: string;
  endTime: string;
  attributes: Record<string, AttributeValue>;
  status: { code: "unset" | "error"; message?: string };
}
