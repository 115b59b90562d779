import type { Context } from "aws-lambda";
import type * as z from "zod";
import type { PortName, PortsOf } from "../../shared/handlerPorts.js";
import { withDeadline } from "../../shared/llm/deadline.js";
import { withMetrics } from "../../shared/llm/metered.js";
import type { ToolCatalog } from "../../shared/ports/toolCatalog.js";
import { meteredCatalog } from "../../shared/tools/metered.js";
import { modelPort } from "../modelPort.js";
import { toolsPort } from "../toolPorts.js";
import { type HeavyBuilders, wire } from "../wiring.js";
import { type StepDefinition, stepHandlerWith } from "./stepHandler.js";

/** Stop starting new model rounds this long before the Lambda's time runs out. */
const TIME_MARGIN_MS = 60_000;
/** Abort a model call in flight this long before Lambda would stop the function. */
const ABORT_MARGIN_MS = 10_000;

/** The ports of a step that runs an agent, for one invocation: the model and tools metered, and the Lambda's deadline. */
function forInvocation<P extends PortsOf<"model">>(ports: P, context: Context | undefined): P & { deadline?: number } {
  const remaining = context?.getRemainingTimeInMillis?.();
  const model = withMetrics(ports.model);
  const tools: ToolCatalog | undefined = "tools" in ports ? (ports.tools as ToolCatalog) : undefined;
  return {
    ...ports,
    model: remaining ? withDeadline(model, Date.now() + Math.max(remaining - ABORT_MARGIN_MS, remaining * 0.8)) : model,
    ...(tools ? { tools: meteredCatalog(tools) } : {}),
    deadline: remaining ? Date.now() + Math.max(remaining - TIME_MARGIN_MS, remaining / 2) : undefined,
  };
}

/**
 * A step that runs an agent (the model, and tools unless it only writes), wired with the ports its
 * function uses (functions/uses.ts); the model and the tools load on their first call. The step's
 * own port type must accept them, so a port missing from the list fails to compile.
 */
export function agentStepHandler<I extends z.ZodType, O extends z.ZodType, K extends Exclude<PortName, "secrets">>(
  step: StepDefinition<I, O, PortsOf<NoInfer<K> | "model"> & { deadline?: number }>,
  uses: { readonly ports: readonly ("model" | K)[] },
) {
  const heavy = { model: modelPort, tools: toolsPort } satisfies HeavyBuilders<"model" | "tools">;
  const ports = wire(uses, heavy as unknown as HeavyBuilders<"model" | K>);
  return stepHandlerWith(step, (_event, context) => forInvocation(ports, context));
}
