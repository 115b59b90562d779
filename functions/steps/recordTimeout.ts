import { RunRef } from "../../shared/contracts/steps.js";
import { recordTimeout } from "../../shared/steps/recordTimeout.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("RecordTimeout", RunRef, recordTimeout);
