import { AgentTurnInput } from "../../shared/contracts/steps.js";
import { agentTurn } from "../../shared/steps/agentTurn.js";
import { agentStepHandler } from "./agentStep.js";

export const handler = agentStepHandler("AgentTurn", AgentTurnInput, agentTurn);
