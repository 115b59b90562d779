import { PlanInput } from "../../shared/contracts/steps.js";
import { plan } from "../../shared/steps/plan.js";
import { agentStepHandler } from "./agentStep.js";

export const handler = agentStepHandler("Plan", PlanInput, plan);
