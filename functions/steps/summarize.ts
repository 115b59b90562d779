import { RunState } from "../../shared/contracts/steps.js";
import { summarize } from "../../shared/steps/summarize.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("Summarize", RunState.pick({ runId: true }), summarize);
