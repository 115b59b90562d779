import { RecordTaskFailureInput, TaskResult } from "../../shared/contracts/steps.js";
import { recordTaskFailure } from "../../shared/steps/recordTaskFailure.js";
import { HANDLER_USES } from "../uses.js";
import { stepHandler } from "./stepHandler.js";

/** The executor crashed or timed out: the task fails, the run goes on and the planner sees it. */
export const step = { state: "RecordTaskFailure", input: RecordTaskFailureInput, output: TaskResult, run: recordTaskFailure };
export const handler = stepHandler(step, HANDLER_USES.RecordTaskFailure);
