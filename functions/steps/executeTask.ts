import { executeTask } from "../../shared/agent/executor.js";
import { ExecuteTaskInput } from "../../shared/contracts/steps.js";
import { agentTools } from "../../shared/tools/builtins.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler(ExecuteTaskInput, (run, input) => executeTask(run, input, agentTools()));
