import { agentTurn } from "../../shared/agent/react.js";
import { AgentTurnInput } from "../../shared/contracts/steps.js";
import { reactTools } from "../../shared/tools/builtins.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler(AgentTurnInput, (run, input) => agentTurn(run, input, reactTools()));
