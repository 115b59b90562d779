import type { TableItem } from "../ports/journal.js";
import type { Runs } from "../ports/runs.js";
import { compareTasks, type StepContext, type TaskRecord, type Tasks } from "../ports/tasks.js";
import { keys } from "../store/keys.js";
import { stored } from "./clone.js";
import type { ItemSink } from "./memoryJournal.js";

/** The tasks port in memory; the journal fake hands it the task and step items it writes. */
export class MemoryTasks implements Tasks, ItemSink {
  readonly tasks = new Map<string, TaskRecord>();
  readonly steps = new Map<string, StepContext>();

  constructor(private readonly runs: Pick<Runs, "status">) {}

  item(runId: string, task: TaskRecord): TableItem {
    return { ...keys.task(runId, task.iteration, task.taskId), ...task };
  }

  stepItem(runId: string, step: StepContext): TableItem {
    return { ...keys.step(runId, step.iteration), ...step };
  }

  accept(item: TableItem): boolean {
    const { pk, sk, ...data } = item;
    if (sk.startsWith("TASK#")) this.tasks.set(`${pk}|${sk}`, data as unknown as TaskRecord);
    else if (sk.startsWith("STEP#")) this.steps.set(`${pk}|${sk}`, data as unknown as StepContext);
    else return false;
    return true;
  }

  async put(runId: string, task: TaskRecord): Promise<void> {
    this.accept(stored(this.item(runId, task)));
  }

  async get(runId: string, iteration: number, taskId: string): Promise<TaskRecord | undefined> {
    const key = keys.task(runId, iteration, taskId);
    return stored(this.tasks.get(`${key.pk}|${key.sk}`));
  }

  async step(runId: string, iteration: number): Promise<StepContext | undefined> {
    const key = keys.step(runId, iteration);
    return stored(this.steps.get(`${key.pk}|${key.sk}`));
  }

  async stepAndRunStatus(runId: string, iteration: number): Promise<{ step?: StepContext; status?: string }> {
    return { step: await this.step(runId, iteration), status: await this.runs.status(runId) };
  }

  async list(runId: string, iteration?: number): Promise<TaskRecord[]> {
    const prefix = `RUN#${runId}|${keys.taskPrefix(iteration)}`;
    return stored([...this.tasks].filter(([key]) => key.startsWith(prefix)).map(([, task]) => task))
      .sort(compareTasks);
  }
}
