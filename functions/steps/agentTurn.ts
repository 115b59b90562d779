import { AgentTurnInput, AgentTurnOutput } from "../../shared/contracts/steps.js";
import { agentTurn } from "../../shared/steps/agentTurn.js";
import { HANDLER_USES } from "../uses.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "AgentTurn", input: AgentTurnInput, output: AgentTurnOutput, run: agentTurn };
export const handler = agentStepHandler(step, HANDLER_USES.AgentTurn);
