import { RunState } from "../../shared/contracts/steps.js";
import { routeRequest } from "../../shared/steps/routeRequest.js";
import { agentStepHandler } from "./agentStep.js";

export const handler = agentStepHandler("RouteRequest", RunState, routeRequest);
