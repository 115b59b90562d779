import type { Context } from "aws-lambda";
import type { z } from "zod";
import { withDeadline } from "../../shared/llm/deadline.js";
import { withMetrics } from "../../shared/llm/metered.js";
import type { Ports, StepPorts } from "../../shared/ports/index.js";
import { meteredCatalog } from "../../shared/tools/metered.js";
import { getServices } from "../services.js";
import { type StepDefinition, stepHandlerWith } from "./stepHandler.js";

/** Stop starting new model rounds this long before the Lambda's time runs out. */
const TIME_MARGIN_MS = 60_000;
/** Abort a model call in flight this long before Lambda would stop the function. */
const ABORT_MARGIN_MS = 10_000;

/** The ports of a step that runs an agent: every service, the model and tools metered, and the Lambda's deadline. */
function agentPorts(_event: unknown, context: Context | undefined): StepPorts<keyof Ports> {
  const remaining = context?.getRemainingTimeInMillis?.();
  const services = getServices();
  const model = withMetrics(services.model);
  return {
    ...services,
    model: remaining ? withDeadline(model, Date.now() + Math.max(remaining - ABORT_MARGIN_MS, remaining * 0.8)) : model,
    tools: meteredCatalog(services.tools),
    deadline: remaining ? Date.now() + Math.max(remaining - TIME_MARGIN_MS, remaining / 2) : undefined,
  };
}

/** A step that runs an agent (a model with tools). */
export function agentStepHandler<I extends z.ZodType, O extends z.ZodType>(step: StepDefinition<I, O, StepPorts<keyof Ports>>) {
  return stepHandlerWith(step, agentPorts);
}
