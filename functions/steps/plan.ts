import { planStep } from "../../shared/agent/planner.js";
import { PlanInput } from "../../shared/contracts/steps.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("Plan", PlanInput, (run, input) => planStep(run, input));
