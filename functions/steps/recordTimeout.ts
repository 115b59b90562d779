import { FinalizeOutput, RunRef } from "../../shared/contracts/steps.js";
import { recordTimeout } from "../../shared/steps/recordTimeout.js";
import { HANDLER_USES } from "../uses.js";
import { stepHandler } from "./stepHandler.js";

export const step = { state: "RecordTimeout", input: RunRef, output: FinalizeOutput, run: recordTimeout };
export const handler = stepHandler(step, HANDLER_USES.RecordTimeout);
