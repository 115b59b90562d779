import { AgentTurnInput } from "../../shared/contracts/steps.js";
import { agentTurn } from "../../shared/steps/agentTurn.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("AgentTurn", AgentTurnInput, agentTurn);
