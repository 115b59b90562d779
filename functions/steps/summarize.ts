import { RunRef, SummarizeOutput } from "../../shared/contracts/steps.js";
import { summarize } from "../../shared/steps/summarize.js";
import { HANDLER_USES } from "../uses.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "Summarize", input: RunRef, output: SummarizeOutput, run: summarize };
export const handler = agentStepHandler(step, HANDLER_USES.Summarize);
