import { StartRunInput, StartRunOutput } from "../../shared/contracts/steps.js";
import { startRun } from "../../shared/steps/startRun.js";
import { HANDLER_USES } from "../uses.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "StartRun", input: StartRunInput, output: StartRunOutput, run: startRun };
export const handler = agentStepHandler(step, HANDLER_USES.StartRun);
