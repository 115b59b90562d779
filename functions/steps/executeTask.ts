import { ExecuteTaskInput } from "../../shared/contracts/steps.js";
import { executeTask } from "../../shared/steps/executeTask.js";
import { agentStepHandler } from "./agentStep.js";

export const handler = agentStepHandler("ExecuteTask", ExecuteTaskInput, executeTask);
