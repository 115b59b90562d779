import { BatchGetCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
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
  /** The run's files when the step started (its executors run side by side and see the same list). */
  files?: string[];
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

  /**
   * What an executor starts from, in one request: the step's context and the run's status (is it
   * still going?). Unprocessed keys (a busy table) are read again.
   */
  async stepAndRunStatus(runId: string, iteration: number): Promise<{ step?: StepContext; status?: string }> {
    let keysLeft: Record<string, any>[] | undefined = [keys.step(runId, iteration), keys.run(runId)];
    const found: Record<string, any>[] = [];
    for (let attempt = 0; keysLeft?.length; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 20 * 2 ** Math.min(attempt, 6)));
      const result: { Responses?: Record<string, Record<string, any>[]>; UnprocessedKeys?: Record<string, { Keys?: Record<string, any>[] }> } = await this.table.doc.send(new BatchGetCommand({ RequestItems: { [this.table.name]: { Keys: keysLeft, ConsistentRead: true } } }));
      found.push(...(result.Responses?.[this.table.name] ?? []));
      keysLeft = result.UnprocessedKeys?.[this.table.name]?.Keys;
    }
    const step = found.find((item) => item.sk === keys.step(runId, iteration).sk) as StepContext | undefined;
    const run = found.find((item) => item.sk === keys.run(runId).sk);
    return { step, status: run?.status };
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
