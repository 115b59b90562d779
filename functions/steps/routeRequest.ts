import { RunState } from "../../shared/contracts/steps.js";
import { routeRun } from "../../shared/run/lifecycle.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("RouteRequest", RunState, (run) => routeRun(run));
