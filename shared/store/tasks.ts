import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { keys } from "./keys.js";
import { expiresAt, type Table } from "./table.js";

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
}

export class TaskStore {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  async put(runId: string, task: TaskRecord): Promise<void> {
    await this.table.doc.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.task(runId, task.iteration, task.taskId), ...task, ttl: expiresAt(this.retentionDays) },
      }),
    );
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
