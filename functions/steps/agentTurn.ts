import { agentTurn } from "../../shared/agent/react.js";
import { AgentTurnInput } from "../../shared/contracts/steps.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("AgentTurn", AgentTurnInput, (run, input) => agentTurn(run, input));
