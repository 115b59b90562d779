import type { Runs } from "../ports/runs.js";
import { compareTasks, type StepContext, type TaskRecord, type Tasks } from "../ports/tasks.js";
import { stored } from "./clone.js";

const taskId = (runId: string, iteration: number, taskId: string) => `${runId}|${iteration}|${taskId}`;
const stepId = (runId: string, iteration: number) => `${runId}|${iteration}`;

/** The tasks port in memory; the journal fake keeps the task records and step contexts of its commits here. */
export class MemoryTasks implements Tasks {
  private readonly tasks = new Map<string, { runId: string; task: TaskRecord }>();
  private readonly steps = new Map<string, StepContext>();

  constructor(private readonly runs: Pick<Runs, "status">) {}

  async put(runId: string, task: TaskRecord): Promise<void> {
    this.tasks.set(taskId(runId, task.iteration, task.taskId), { runId, task: stored(task) });
  }

  /** A step context, as the journal's commit writes it. */
  putStep(runId: string, step: StepContext): void {
    this.steps.set(stepId(runId, step.iteration), stored(step));
  }

  async get(runId: string, iteration: number, id: string): Promise<TaskRecord | undefined> {
    return stored(this.tasks.get(taskId(runId, iteration, id))?.task);
  }

  async step(runId: string, iteration: number): Promise<StepContext | undefined> {
    return stored(this.steps.get(stepId(runId, iteration)));
  }

  async stepAndRunStatus(runId: string, iteration: number): Promise<{ step?: StepContext; status?: string }> {
    return { step: await this.step(runId, iteration), status: await this.runs.status(runId) };
  }

  async list(runId: string, iteration?: number): Promise<TaskRecord[]> {
    const mine = [...this.tasks.values()].filter((t) => t.runId === runId && (iteration === undefined || t.task.iteration === iteration));
    return stored(mine.map((t) => t.task)).sort(compareTasks);
  }
}
