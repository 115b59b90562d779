import { PlanInput, PlanOutput } from "../../shared/contracts/steps.js";
import { plan } from "../../shared/steps/plan.js";
import { HANDLER_USES } from "../uses.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "Plan", input: PlanInput, output: PlanOutput, run: plan };
export const handler = agentStepHandler(step, HANDLER_USES.Plan);
