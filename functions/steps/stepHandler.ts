import middy from "@middy/core";
import type { Context } from "aws-lambda";
import type * as z from "zod";
import { checkSchemaVersion, SCHEMA_VERSION } from "../../shared/contracts/schemaVersion.js";
import { scopeOf } from "../../shared/contracts/steps.js";
import { toStepError } from "../../shared/errors.js";
import type { PortName, PortsOf } from "../../shared/handlerPorts.js";
import { logger } from "../../shared/observability.js";
import { observability } from "../observability.js";
import { type HeavyBuilders, type HeavyPort, wire } from "../wiring.js";

/** What a step receives: its ports, and when its Lambda's time runs out. */
export type PortsFor<P> = (event: unknown, context: Context | undefined) => P;

/** One Task of the state machine: the step function's name, the schemas of its input and output, and its step (shared/steps/). */
export interface StepDefinition<I extends z.ZodType, O extends z.ZodType, P> {
  state: string;
  input: I;
  output: O;
  run: (input: z.infer<I>, ports: P) => Promise<z.input<O>>;
}

/**
 * A state machine Task handler: refuse state of a newer schema version, validate the state's input, run its step (shared/steps/) with the
 * ports `portsFor` gives, return the next state's (small) input. Errors leave as StepErrors, whose
 * name (the Lambda errorType) is the code the state machine's Retry and Catch match on.
 */
export function stepHandlerWith<I extends z.ZodType, O extends z.ZodType, P>(
  { state, input: inputSchema, output: outputSchema, run }: StepDefinition<I, O, P>,
  portsFor: PortsFor<P>,
) {
  return middy(async (event: unknown, context: Context): Promise<z.infer<O>> => {
    try {
      checkSchemaVersion(`The state of "${state}"`, (event as { schemaVersion?: unknown } | undefined)?.schemaVersion);
      const input = inputSchema.parse(event) as z.infer<I>;
      // The output is checked too: the next state's input is exactly its schema's shape.
      return stamped(outputSchema.parse(await run(input, portsFor(event, context))) as z.infer<O>);
    } catch (error) {
      const stepError = toStepError(error);
      logger[stepError.retryable ? "warn" : "error"]("step failed", { errorType: stepError.name, error: stepError.cause ?? stepError });
      throw stepError;
    }
  }).use(
    observability((event: { runId?: string; iteration?: number; task?: { taskId?: string } }) => ({
      runId: event?.runId,
      state,
      scope:
        event?.task?.taskId && event.iteration !== undefined
          ? scopeOf({ iteration: event.iteration, task: { taskId: event.task.taskId } })
          : undefined,
    })),
  );
}

/** The state a step hands on names the schema version it was written with (shared/contracts/schemaVersion.ts). */
function stamped<R>(output: R): R {
  return output && typeof output === "object" && !Array.isArray(output) ? { ...output, schemaVersion: SCHEMA_VERSION } : output;
}

/**
 * A step that runs no agent, wired with the ports its function uses (functions/uses.ts); the step's
 * own port type must accept them, so a port missing from the list fails to compile.
 * functions/steps/agentStep.ts adds the model and tools.
 */
export function stepHandler<I extends z.ZodType, O extends z.ZodType, K extends Exclude<PortName, HeavyPort>>(
  step: StepDefinition<I, O, PortsOf<NoInfer<K>>>,
  uses: { readonly ports: readonly K[] },
) {
  const ports = wire(uses, {} as HeavyBuilders<K>);
  return stepHandlerWith(step, () => ports);
}
