import { StartRunInput } from "../../shared/contracts/steps.js";
import { startRun } from "../../shared/run/lifecycle.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("StartRun", StartRunInput, (run) => startRun(run));
