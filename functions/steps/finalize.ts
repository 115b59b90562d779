import { FinalizeOutput, RunRef } from "../../shared/contracts/steps.js";
import { finalize } from "../../shared/steps/finalize.js";
import { HANDLER_USES } from "../uses.js";
import { agentStepHandler } from "./agentStep.js";

/** Ends the run; once it has ended, its session's first answered turn is titled (the model, no tools). */
export const step = { state: "Finalize", input: RunRef, output: FinalizeOutput, run: finalize };
export const handler = agentStepHandler(step, HANDLER_USES.Finalize);
