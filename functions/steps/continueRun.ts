import { ContinueRunInput } from "../../shared/contracts/steps.js";
import { continueRun } from "../../shared/steps/continueRun.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("ContinueRun", ContinueRunInput, continueRun);
