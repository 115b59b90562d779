import { RunRef } from "../../shared/contracts/steps.js";
import { finalize } from "../../shared/steps/finalize.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("Finalize", RunRef, finalize);
