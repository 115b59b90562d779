import middy from "@middy/core";
import type { Context } from "aws-lambda";
import type { z } from "zod";
import type { RunScope } from "../../shared/agent/loop.js";
import { getServices } from "../services.js";

/** Stop starting new model rounds this long before the Lambda's time runs out. */
const TIME_MARGIN_MS = 60_000;

/**
 * A state machine Task handler: validate the state's input, run one step of shared/, return the
 * next state's (small) input. Errors propagate so the state machine's Retry/Catch see them.
 */
export function stepHandler<S extends z.ZodType, R>(schema: S, step: (run: RunScope, input: z.infer<S>) => Promise<R>) {
  return middy(async (event: unknown, context: Context): Promise<R> => {
    const input = schema.parse(event) as z.infer<S> & { runId: string };
    const remaining = context?.getRemainingTimeInMillis?.();
    return step(
      {
        runId: input.runId,
        services: getServices(),
        deadline: remaining ? Date.now() + Math.max(remaining - TIME_MARGIN_MS, remaining / 2) : undefined,
      },
      input,
    );
  });
}
