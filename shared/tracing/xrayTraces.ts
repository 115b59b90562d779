import AWSXRay, { type Segment, type Subsegment } from "aws-xray-sdk-core";
import type { AttributeValue, GenAiSpan } from "../contracts/traces.js";
import type { TraceExport } from "../ports/traces.js";

/** X-Ray's limits: a segment's name, an annotation's key. */
const NAME_MAX = 200;
const NOT_IN_NAME = /[^\p{L}\p{N}\s_.:/%&#=+\\\-@]/gu;
const NOT_IN_ANNOTATION_KEY = /[^A-Za-z0-9_]/g;
/**
 * A text attribute is cut to this many characters (a tool's arguments and result can be 48,000):
 * one span per UDP datagram, which the daemon takes up to 64 KB.
 */
const VALUE_MAX = 8_000;

/**
 * A run's GenAI spans sent to X-Ray through the X-Ray daemon (on Lambda, the one active tracing
 * runs; AWS_XRAY_DAEMON_ADDRESS), with the X-Ray SDK's segments and emitter, as the SDK streams a
 * Lambda's subsegments: one segment document per span. The run's span is a segment (the run's
 * trace, its id the OpenTelemetry one in X-Ray's form), every other a subsegment naming its
 * parent. The attributes keep their OpenTelemetry names as metadata (namespace `default`, where
 * X-Ray's OpenTelemetry exporter puts them); the run's scalar ones are also annotations, searchable,
 * their keys in X-Ray's alphabet (`gen_ai.agent.name` → `gen_ai_agent_name`).
 */
export class XRayTraces implements TraceExport {
  readonly active = true;

  constructor(daemonAddress: string) {
    AWSXRay.setDaemonAddress(daemonAddress);
  }

  async send(spans: GenAiSpan[]): Promise<void> {
    const [run, ...rest] = spans;
    if (!run) return;
    const segment = new AWSXRay.Segment(xrayName(run.name), xrayTraceId(run.traceId));
    record(segment, run);
    for (const [key, value] of Object.entries(run.attributes))
      if (!Array.isArray(value)) segment.addAnnotation(key.replace(NOT_IN_ANNOTATION_KEY, "_"), value);
    const byId = new Map<string, Segment | Subsegment>([[run.spanId, segment]]);
    const subsegments: Subsegment[] = [];
    for (const span of rest) {
      const subsegment = new AWSXRay.Subsegment(xrayName(span.name));
      // Not added to the parent's list: each is sent on its own, naming its parent (as SDK streaming does).
      subsegment.parent = byId.get(span.parentSpanId ?? "") ?? segment;
      subsegment.segment = segment;
      if (span.kind === "client") subsegment.namespace = "remote";
      record(subsegment, span);
      byId.set(span.spanId, subsegment);
      subsegments.push(subsegment);
    }
    segment.flush();
    for (const subsegment of subsegments) subsegment.flush();
  }
}

/** X-Ray's form of an OpenTelemetry trace id whose first 4 bytes are epoch seconds (as a run's are). */
export const xrayTraceId = (traceId: string) => `1-${traceId.slice(0, 8)}-${traceId.slice(8)}`;

const xrayName = (name: string) => name.replace(NOT_IN_NAME, "_").slice(0, NAME_MAX);

/** The span's id, times, outcome and attributes on its (sub)segment, closed. */
function record(target: Segment | Subsegment, span: GenAiSpan): void {
  Object.assign(target, { id: span.spanId, start_time: seconds(span.startTime), end_time: seconds(span.endTime) });
  delete target.in_progress;
  for (const [key, value] of Object.entries(span.attributes)) target.addMetadata(key, cut(value));
  if (span.status.code === "error") {
    const type = span.attributes["error.type"];
    target.addError({ name: typeof type === "string" ? type : "error", message: span.status.message ?? "" }, span.kind === "client");
  }
}

const seconds = (iso: string) => Date.parse(iso) / 1000;

function cut(value: AttributeValue): AttributeValue {
  if (typeof value !== "string" || value.length <= VALUE_MAX) return value;
  // Never between the two halves of a character outside the BMP.
  const end = /[\uD800-\uDBFF]/.test(value[VALUE_MAX - 1] ?? "") ? VALUE_MAX - 1 : VALUE_MAX;
  return `${value.slice(0, end)}… (cut)`;
}
