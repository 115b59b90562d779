import { AgentTurnInput } from "../../shared/contracts/steps.js";
import { agentTurn } from "../../shared/steps/agentTurn.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "AgentTurn", schema: AgentTurnInput, run: agentTurn };
export const handler = agentStepHandler(step);
