import { RecordFailureInput } from "../../shared/contracts/steps.js";
import { recordFailure } from "../../shared/steps/recordFailure.js";
import { stepHandler } from "./stepHandler.js";

export const step = { state: "RecordFailure", schema: RecordFailureInput, run: recordFailure };
export const handler = stepHandler(step);
