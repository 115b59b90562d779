import { RunRef } from "../../shared/contracts/steps.js";
import { finalizeRun } from "../../shared/run/lifecycle.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("Finalize", RunRef, (run) => finalizeRun(run));
