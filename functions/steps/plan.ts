import { PlanInput } from "../../shared/contracts/steps.js";
import { plan } from "../../shared/steps/plan.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("Plan", PlanInput, plan);
