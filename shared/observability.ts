import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";

/**
 * Powertools for AWS Lambda: one structured JSON logger and one EMF metrics buffer for all Stepwise
 * code (the X-Ray tracer is the handlers', functions/observability.ts). Handlers attach them through
 * middy middlewares that add the invocation's keys (runId, tenant, state, scope, requestId) and flush the metrics.
 * The local stack runs the same code and prints the same lines; tracing is off outside Lambda.
 * POWERTOOLS_SERVICE_NAME, POWERTOOLS_METRICS_NAMESPACE and POWERTOOLS_LOG_LEVEL override the defaults.
 */
export const logger = new Logger({ serviceName: "stepwise" });
export const metrics = new Metrics({ namespace: "Stepwise", serviceName: "stepwise" });
export { MetricUnit };

/**
 * Metrics with dimensions of their own: each `addMetric` publishes one EMF line and clears the
 * dimensions. One instance serves every such metric (the calls are synchronous): `singleMetric()`
 * builds a new instance, with a console of its own, every time.
 */
let dimensioned: Metrics | undefined;

/** Adds to a metric; with a dimension (e.g. the tool's name) it is published at once as its own EMF line. */
export function countMetric(
  name: string,
  value = 1,
  dimensions: Record<string, string> = {},
  unit: (typeof MetricUnit)[keyof typeof MetricUnit] = MetricUnit.Count,
): void {
  if (Object.keys(dimensions).length === 0) {
    metrics.addMetric(name, unit, value);
    return;
  }
  dimensioned ??= metrics.singleMetric();
  const single = dimensioned;
  for (const [key, dimension] of Object.entries(dimensions)) single.addDimension(key, dimension);
  single.addMetric(name, unit, value);
}
