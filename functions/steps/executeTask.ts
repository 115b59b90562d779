import { executeTask } from "../../shared/agent/executor.js";
import { ExecuteTaskInput } from "../../shared/contracts/steps.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("ExecuteTask", ExecuteTaskInput, (run, input) => executeTask(run, input));
