import { PlanInput, PlanOutput } from "../../shared/contracts/steps.js";
import { plan } from "../../shared/steps/plan.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "Plan", input: PlanInput, output: PlanOutput, run: plan };
export const handler = agentStepHandler(step);
