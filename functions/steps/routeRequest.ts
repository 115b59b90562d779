import { RunState } from "../../shared/contracts/steps.js";
import { routeRequest } from "../../shared/steps/routeRequest.js";
import { HANDLER_USES } from "../uses.js";
import { agentStepHandler } from "./agentStep.js";

export const step = { state: "RouteRequest", input: RunState, output: RunState, run: routeRequest };
export const handler = agentStepHandler(step, HANDLER_USES.RouteRequest);
