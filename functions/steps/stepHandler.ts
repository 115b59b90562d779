import middy from "@middy/core";
import type { Context } from "aws-lambda";
import type { z } from "zod";
import type { Ports, StepPorts } from "../../shared/ports/index.js";
import { scopeOf } from "../../shared/agent/executor.js";
import { toStepError } from "../../shared/errors.js";
import { withDeadline } from "../../shared/llm/deadline.js";
import { withMetrics } from "../../shared/llm/metered.js";
import { logger } from "../../shared/observability.js";
import { meteredCatalog } from "../../shared/tools/metered.js";
import { observability } from "../observability.js";
import { getServices } from "../services.js";

/** Stop starting new model rounds this long before the Lambda's time runs out. */
const TIME_MARGIN_MS = 60_000;
/** Abort a model call in flight this long before Lambda would stop the function. */
const ABORT_MARGIN_MS = 10_000;

/**
 * A state machine Task handler: validate the state's input, run its step (shared/steps/) with the
 * adapters as ports, return the next state's (small) input. Errors leave as StepErrors, whose name (the Lambda errorType) is the
 * code the state machine's Retry and Catch match on.
 */
export function stepHandler<S extends z.ZodType, R>(state: string, schema: S, step: (input: z.infer<S>, ports: StepPorts<keyof Ports>) => Promise<R>) {
  return middy(async (event: unknown, context: Context): Promise<R> => {
    try {
      const input = schema.parse(event) as z.infer<S>;
      const remaining = context?.getRemainingTimeInMillis?.();
      const services = getServices();
      const model = withMetrics(services.model);
      return await step(input, {
        ...services,
        model: remaining ? withDeadline(model, Date.now() + Math.max(remaining - ABORT_MARGIN_MS, remaining * 0.8)) : model,
        tools: meteredCatalog(services.tools),
        deadline: remaining ? Date.now() + Math.max(remaining - TIME_MARGIN_MS, remaining / 2) : undefined,
      });
    } catch (error) {
      const stepError = toStepError(error);
      logger[stepError.retryable ? "warn" : "error"]("step failed", { errorType: stepError.name, error: stepError.cause ?? stepError });
      throw stepError;
    }
  }).use(observability((event: { runId?: string; iteration?: number; task?: { taskId?: string } }) => ({
    runId: event?.runId,
    state,
    scope: event?.task?.taskId && event.iteration !== undefined ? scopeOf({ iteration: event.iteration, task: { taskId: event.task.taskId } }) : undefined,
  })));
}
