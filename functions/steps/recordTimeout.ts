import { RunRef } from "../../shared/contracts/steps.js";
import { recordTimeout } from "../../shared/run/lifecycle.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("RecordTimeout", RunRef, (run) => recordTimeout(run));
