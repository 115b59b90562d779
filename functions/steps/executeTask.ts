import { ExecuteTaskInput } from "../../shared/contracts/steps.js";
import { executeTask } from "../../shared/steps/executeTask.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("ExecuteTask", ExecuteTaskInput, executeTask);
