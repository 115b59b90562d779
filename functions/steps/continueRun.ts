import { ContinueRunInput } from "../../shared/contracts/steps.js";
import { continueRun } from "../../shared/steps/continueRun.js";
import { stepHandler } from "./stepHandler.js";

export const step = { state: "ContinueRun", schema: ContinueRunInput, run: continueRun };
export const handler = stepHandler(step);
