import { RunState } from "../../shared/contracts/steps.js";
import { summarize } from "../../shared/steps/summarize.js";
import { agentStepHandler } from "./agentStep.js";

export const handler = agentStepHandler("Summarize", RunState.pick({ runId: true }), summarize);
