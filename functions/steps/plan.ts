import { PlanInput } from "../../shared/contracts/steps.js";
import { plan } from "../../shared/steps/plan.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "Plan", schema: PlanInput, run: plan };
export const handler = agentStepHandler(step);
