import { ExecuteTaskInput } from "../../shared/contracts/steps.js";
import { executeTask } from "../../shared/steps/executeTask.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "ExecuteTask", schema: ExecuteTaskInput, run: executeTask };
export const handler = agentStepHandler(step);
