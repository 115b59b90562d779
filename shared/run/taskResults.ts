import { ConflictError, NotFoundError } from "../errors.js";
import type { Ports } from "../ports/index.js";
import type { TaskRecord } from "../ports/tasks.js";
import { wholeResultOf } from "../views/taskView.js";
import { ownRunSnapshot } from "./access.js";

/** A task's whole result: the text its record holds, or the run file that holds it when the record keeps only its beginning. */
export type WholeResult = { taskId: string; bytes: number } & ({ text: string } | { file: string });

/**
 * The whole result of one task of the tenant's run (`GET /v1/runs/{id}/tasks/{taskId}/result`).
 * Another tenant's run and a task the run does not have are reported as missing; a task still
 * running has no result yet (409).
 */
export async function wholeTaskResult(
  ports: Pick<Ports, "snapshots">,
  tenantId: string,
  runId: string,
  taskId: string,
): Promise<WholeResult> {
  const { run, tasks, files } = await ownRunSnapshot(ports, tenantId, runId);
  // Task ids are unique within a run; should a hand-made run repeat one, the latest step's counts.
  const task = tasks.findLast((t: TaskRecord) => t.taskId === taskId);
  if (!task) throw new NotFoundError(`Run ${run.runId} has no task ${taskId}.`);
  const whole = wholeResultOf(task, files);
  if (!whole || task.result === undefined)
    throw new ConflictError(`Task ${taskId} of run ${run.runId} has no result yet: it is still running.`, { status: task.status });
  return whole.file ? { taskId, bytes: whole.bytes, file: whole.file } : { taskId, bytes: whole.bytes, text: task.result };
}
