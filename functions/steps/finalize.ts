import { FinalizeOutput, RunRef } from "../../shared/contracts/steps.js";
import { finalize } from "../../shared/steps/finalize.js";
import { HANDLER_USES } from "../uses.js";
import { stepHandler } from "./stepHandler.js";

export const step = { state: "Finalize", input: RunRef, output: FinalizeOutput, run: finalize };
export const handler = stepHandler(step, HANDLER_USES.Finalize);
