import { RecordFailureInput } from "../../shared/contracts/steps.js";
import { recordFailure } from "../../shared/steps/recordFailure.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("RecordFailure", RecordFailureInput, recordFailure);
