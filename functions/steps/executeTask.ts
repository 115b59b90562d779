import { ExecuteTaskInput, TaskResult } from "../../shared/contracts/steps.js";
import { executeTask } from "../../shared/steps/executeTask.js";
import { HANDLER_USES } from "../uses.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "ExecuteTask", input: ExecuteTaskInput, output: TaskResult, run: executeTask };
export const handler = agentStepHandler(step, HANDLER_USES.ExecuteTask);
