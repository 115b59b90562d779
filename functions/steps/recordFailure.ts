import { RecordFailureInput } from "../../shared/contracts/steps.js";
import { recordFailure } from "../../shared/run/lifecycle.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("RecordFailure", RecordFailureInput, (run, input) => recordFailure(run, input.error));
