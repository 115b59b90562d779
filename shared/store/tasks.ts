import { compareTasks, type StepContext, type TaskRecord, type Tasks } from "../ports/tasks.js";
import { keys } from "./keys.js";
import { expiresAt, type Table } from "./table.js";

/** A task record's item (the journal writes it in one batch with the entries of the task's end). */
export const taskItem = (runId: string, task: TaskRecord, ttl: number) => ({
  ...keys.task(runId, task.iteration, task.taskId),
  ...task,
  ttl,
});

/** A step context's item (the journal writes it in one batch with the planner's entries). */
export const stepItem = (runId: string, step: StepContext, ttl: number) => ({ ...keys.step(runId, step.iteration), ...step, ttl });

export class TaskStore implements Tasks {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  async put(runId: string, task: TaskRecord): Promise<void> {
    await this.table.putItem({ Item: taskItem(runId, task, expiresAt(this.retentionDays)) });
  }

  async get(runId: string, iteration: number, taskId: string): Promise<TaskRecord | undefined> {
    const { Item } = await this.table.getItem({ Key: keys.task(runId, iteration, taskId), ConsistentRead: true });
    return Item as TaskRecord | undefined;
  }

  async step(runId: string, iteration: number): Promise<StepContext | undefined> {
    const { Item } = await this.table.getItem({ Key: keys.step(runId, iteration), ConsistentRead: true });
    return Item as StepContext | undefined;
  }

  /**
   * What an executor starts from, in one request: the step's context and the run's status (is it
   * still going?). Unprocessed keys (a busy table) are read again.
   */
  async stepAndRunStatus(runId: string, iteration: number): Promise<{ step?: StepContext; status?: string }> {
    // Parallel executors of a step ask at once: their reads share one request (see getConsistent).
    const [step, run] = await Promise.all([
      this.table.getConsistent<StepContext>(keys.step(runId, iteration)),
      this.table.getConsistent(keys.run(runId)),
    ]);
    return { step, status: run?.status };
  }

  /** Results of one iteration, or of the whole run, in iteration then task order. */
  async list(runId: string, iteration?: number): Promise<TaskRecord[]> {
    const items = await this.table.queryPrefix<TaskRecord>(keys.runPk(runId), keys.taskPrefix(iteration));
    return items.sort(compareTasks);
  }
}
