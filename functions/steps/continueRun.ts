import { ContinueRunInput, ContinueRunOutput } from "../../shared/contracts/steps.js";
import { continueRun } from "../../shared/steps/continueRun.js";
import { HANDLER_USES } from "../uses.js";
import { stepHandler } from "./stepHandler.js";

export const step = { state: "ContinueRun", input: ContinueRunInput, output: ContinueRunOutput, run: continueRun };
export const handler = stepHandler(step, HANDLER_USES.ContinueRun);
