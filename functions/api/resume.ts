import { NotFoundError } from "../../shared/errors.js";
import { resumeRun } from "../../shared/run/resume.js";
import { type HttpResult, json } from "../http.js";
import type { Request, Route } from "./routes.js";

/**
 * `POST /v1/runs/{runId}/resume`: a failed run continues at the step that failed (Step Functions
 * redrive; the journal replays what was done), or a run whose execution is gone gets one again.
 * 202 with the run's status; 409 when there is nothing to resume or it cannot be.
 */
async function resume({ services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await services.runs.get(params.runId);
  if (!run || run.tenantId !== tenantId) throw new NotFoundError(`No run with id ${params.runId}.`);
  const resumed = await resumeRun(services, run);
  return json(202, { runId: resumed.runId, status: resumed.status });
}

export const resumeRoutes: Route[] = [{ method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/resume$/, handle: resume }];
