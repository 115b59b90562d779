import { NotFoundError } from "../errors.js";
import type { HandlerPorts } from "../handlerPorts.js";
import type { Ports } from "../ports/index.js";

const RUN_ID = /^[A-Za-z0-9_-]{1,80}$/;

/** Another tenant's run is reported exactly like a missing one. */
export async function ownRun(services: Pick<Ports, "runs">, tenantId: string, runId: string) {
  const run = RUN_ID.test(runId) ? await services.runs.get(runId) : undefined;
  if (!run || run.tenantId !== tenantId) throw new NotFoundError(`No run with id ${runId}.`);
  return run;
}

/** The tenant's run with its tasks, files and interrupts, in one read. */
export async function ownRunSnapshot(services: Pick<HandlerPorts, "snapshots">, tenantId: string, runId: string) {
  const snapshot = RUN_ID.test(runId) ? await services.snapshots.get(runId) : undefined;
  if (!snapshot || snapshot.run.tenantId !== tenantId) throw new NotFoundError(`No run with id ${runId}.`);
  return snapshot;
}
