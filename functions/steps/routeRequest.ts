import { RunState } from "../../shared/contracts/steps.js";
import { routeRequest } from "../../shared/steps/routeRequest.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("RouteRequest", RunState, routeRequest);
