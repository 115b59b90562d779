import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { Plan } from "../contracts/plan.js";
import type { Usage } from "../contracts/run.js";
import { keys } from "./keys.js";
import { expiresAt, type Table } from "./table.js";
import type { TableItem } from "./journal.js";

/** A sub-task's whole result; the state machine carries only a preview. */
export interface TaskRecord {
  iteration: number;
  stepIndex: number;
  taskId: string;
  title: string;
  /** The task as the planner wrote it (the state machine carries a short title). */
  text: string;
  status: "pending" | "succeeded" | "failed";
  result?: string;
  startedAt?: string;
  endedAt?: string;
  /** The executor's model and tool calls; the run's usage is its own plus its tasks'. */
  usage?: Partial<Usage>;
}

/**
 * What every executor of one step starts from, written once by the planner when it hands the step
 * to the Map: the request, the plan, the results of earlier steps (the run memory at the fork
 * point) and the run's settings. Executors read this one item instead of the run and every task,
 * and a retried or resumed executor sees exactly the same memory.
 */
export interface StepContext {
  iteration: number;
  stepIndex: number;
  tenantId: string;
  request: string;
  plan?: Plan;
  /** Earlier steps' results, one line per task, in task order. */
  priorResults: string[];
  approvalTools?: "none" | "write" | "all";
  maxRounds: number;
  tasks: { taskId: string; title: string; text: string }[];
}

export class TaskStore {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  /** The item of a task record, for a batch write with other records. */
  item(runId: string, task: TaskRecord): TableItem {
    return { ...keys.task(runId, task.iteration, task.taskId), ...task, ttl: expiresAt(this.retentionDays) };
  }

  stepItem(runId: string, step: StepContext): TableItem {
    return { ...keys.step(runId, step.iteration), ...step, ttl: expiresAt(this.retentionDays) };
  }

  async put(runId: string, task: TaskRecord): Promise<void> {
    await this.table.doc.send(new PutCommand({ TableName: this.table.name, Item: this.item(runId, task) }));
  }

  async get(runId: string, iteration: number, taskId: string): Promise<TaskRecord | undefined> {
    const { Item } = await this.table.doc.send(new GetCommand({ TableName: this.table.name, Key: keys.task(runId, iteration, taskId), ConsistentRead: true }));
    return Item as TaskRecord | undefined;
  }

  async step(runId: string, iteration: number): Promise<StepContext | undefined> {
    const { Item } = await this.table.doc.send(new GetCommand({ TableName: this.table.name, Key: keys.step(runId, iteration), ConsistentRead: true }));
    return Item as StepContext | undefined;
  }

  /** Results of one iteration, or of the whole run, in iteration then task order. */
  async list(runId: string, iteration?: number): Promise<TaskRecord[]> {
    const items = await this.table.queryPrefix<TaskRecord>(`RUN#${runId}`, keys.taskPrefix(iteration));
    return items.sort((a, b) => a.iteration - b.iteration || compareTaskIds(a.taskId, b.taskId));
  }
}

/** Task ids are "t1", "t2", … ; compare by number so t10 follows t9. */
export function compareTaskIds(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}
