import { NotFoundError } from "../../shared/errors.js";
import type { Services } from "../../shared/services.js";
import type { Links } from "../../shared/run/view.js";
import { baseUrl, type HttpEvent } from "../http.js";

const RUN_ID = /^[A-Za-z0-9_-]{1,80}$/;

/** Another tenant's run is reported exactly like a missing one. */
export async function ownRun(services: Services, tenantId: string, runId: string) {
  const run = RUN_ID.test(runId) ? await services.runs.get(runId) : undefined;
  if (!run || run.tenantId !== tenantId) throw new NotFoundError(`No run with id ${runId}.`);
  return run;
}

/** The tenant's run with its tasks, files and interrupts, in one read. */
export async function ownRunSnapshot(services: Services, tenantId: string, runId: string) {
  const snapshot = RUN_ID.test(runId) ? await services.snapshots.get(runId) : undefined;
  if (!snapshot || snapshot.run.tenantId !== tenantId) throw new NotFoundError(`No run with id ${runId}.`);
  return snapshot;
}

export function linksFor(event: HttpEvent, services: Services): Links {
  const api = baseUrl(event);
  return { api, stream: (services.config.STREAM_URL ?? api).replace(/\/$/, ""), console: services.config.CONSOLE_LINKS };
}
