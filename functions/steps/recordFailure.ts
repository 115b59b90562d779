import { RecordFailureInput, RecordFailureOutput } from "../../shared/contracts/steps.js";
import { recordFailure } from "../../shared/steps/recordFailure.js";
import { HANDLER_USES } from "../uses.js";
import { stepHandler } from "./stepHandler.js";

export const step = { state: "RecordFailure", input: RecordFailureInput, output: RecordFailureOutput, run: recordFailure };
export const handler = stepHandler(step, HANDLER_USES.RecordFailure);
