import { StartRunInput } from "../../shared/contracts/steps.js";
import { startRun } from "../../shared/steps/startRun.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("StartRun", StartRunInput, startRun);
