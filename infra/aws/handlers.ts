import type { StepwiseBundling } from "./stepwiseFunction.js";

/**
 * Every Lambda of the stack: its construct id and entry file. The stack builds a StepwiseFunction
 * (an esbuild bundle) from each; the local stack imports the same files and invokes their `handler` in-process.
 */
export const STEP_HANDLERS = {
  StartRun: "functions/steps/startRun.ts",
  RouteRequest: "functions/steps/routeRequest.ts",
  AgentTurn: "functions/steps/agentTurn.ts",
  Plan: "functions/steps/plan.ts",
  ExecuteTask: "functions/steps/executeTask.ts",
  RecordTaskFailure: "functions/steps/recordTaskFailure.ts",
  Summarize: "functions/steps/summarize.ts",
  Finalize: "functions/steps/finalize.ts",
  RecordFailure: "functions/steps/recordFailure.ts",
  AwaitInterrupt: "functions/steps/awaitInterrupt.ts",
  RecordTimeout: "functions/steps/recordTimeout.ts",
  ContinueRun: "functions/steps/continueRun.ts",
} as const;

export type StepName = keyof typeof STEP_HANDLERS;

/** The steps that run an agent (a model and tools); the others only read and write the run's records. */
export const AGENT_STEPS = ["RouteRequest", "AgentTurn", "Plan", "ExecuteTask", "Summarize"] as const satisfies readonly StepName[];

export const API_HANDLER = "functions/api/handler.ts";
/** The API function's time limit: within API Gateway's 30 s for a whole request. */
export const API_TIMEOUT_SECONDS = 29;
export const STREAM_HANDLER = "functions/stream/handler.ts";
/** AG-UI's schemas, which take all of zod, ship apart: read with the stream's first AG-UI request, not at every cold start. */
export const STREAM_BUNDLING = { bundledApart: ["@ag-ui/core/schemas"] } satisfies StepwiseBundling;
export const NOTIFY_HANDLER = "functions/notify/handler.ts";
export const SANDBOX_HANDLER = "functions/sandbox/handler.ts";
