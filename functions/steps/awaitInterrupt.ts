import { AwaitInterruptInput, AwaitInterruptOutput } from "../../shared/contracts/steps.js";
import { awaitInterrupt } from "../../shared/steps/awaitInterrupt.js";
import { HANDLER_USES } from "../uses.js";
import { stepHandler } from "./stepHandler.js";

/** Runs for every "Wait for …" callback state: stores the task token with the interrupt. */
export const step = { state: "AwaitInterrupt", input: AwaitInterruptInput, output: AwaitInterruptOutput, run: awaitInterrupt };
export const handler = stepHandler(step, HANDLER_USES.AwaitInterrupt);
