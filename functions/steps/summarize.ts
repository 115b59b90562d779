import { RunState } from "../../shared/contracts/steps.js";
import { summarize } from "../../shared/steps/summarize.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "Summarize", schema: RunState.pick({ runId: true }), run: summarize };
export const handler = agentStepHandler(step);
