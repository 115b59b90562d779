import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { CallToolResult, Result, Task } from "@modelcontextprotocol/sdk/types.js";
import type { RunRecord } from "../contracts/run.js";
import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import { NotFoundError } from "../errors.js";
import type { DoorPorts } from "../handlerPorts.js";
import { ownRun } from "../run/access.js";
import { cancelRun } from "../run/cancel.js";

/** How often a client polls tasks/get (the run's events come faster; a person's decision slower). */
const POLL_INTERVAL_MS = 1_000;

const TASK_STATUS: Record<RunRecord["status"], Task["status"]> = {
  queued: "working",
  running: "working",
  awaiting_input: "input_required",
  succeeded: "completed",
  failed: "failed",
  timed_out: "failed",
  cancelled: "cancelled",
  interrupted: "cancelled",
  blocked: "failed",
  budget_exhausted: "completed",
};

/**
 * MCP tasks (the SDK's experimental task support) over Stepwise runs: a task is a run, its id the
 * run id, its status the run's, its result the run's answer as run_task gives it. Nothing is
 * stored beside the run, so any container answers tasks/get, tasks/result, tasks/list and
 * tasks/cancel, and a task outlives every connection. Scoped to the key's tenant like the run API.
 */
export class RunTaskStore implements TaskStore {
  /**
   * What a call without task augmentation followed itself (progress, elicitation, its time limit),
   * by run id: the SDK reads a task-capable tool's answer through getTaskResult.
   */
  private readonly followed = new Map<string, CallToolResult>();

  constructor(
    private readonly services: DoorPorts,
    private readonly tenantId: string,
    private readonly ttlMs: number,
    private readonly describe: (run: RunRecord) => Promise<CallToolResult>,
  ) {}

  /** The task of a run run_task started (`context.runId`). */
  async createTask(options: CreateTaskOptions): Promise<Task> {
    return this.taskOf(await ownRun(this.services, this.tenantId, String(options.context?.runId)));
  }

  /**
   * The task of a run this call has followed to its answer (or of a run refused, `run` undefined):
   * done as far as the call is concerned, so the SDK asks for the result at once instead of polling
   * (the object stays in this process).
   */
  async followedTask(run: RunRecord | undefined, result: CallToolResult): Promise<Task> {
    if (!run) {
      const taskId = `refused_${crypto.randomUUID()}`;
      this.followed.set(taskId, result);
      const now = new Date().toISOString();
      return { taskId, status: "failed", ttl: this.ttlMs, createdAt: now, lastUpdatedAt: now, pollInterval: POLL_INTERVAL_MS };
    }
    this.followed.set(run.runId, result);
    return { ...this.taskOf(run), status: "completed" };
  }

  async getTask(taskId: string): Promise<Task | null> {
    const run = await this.find(taskId);
    return run ? this.taskOf(run) : null;
  }

  /** A run's result is its own: nothing to store. */
  async storeTaskResult(): Promise<void> {}

  async getTaskResult(taskId: string): Promise<Result> {
    return this.followed.get(taskId) ?? this.describe(await ownRun(this.services, this.tenantId, taskId));
  }

  /** The one change a client asks for, tasks/cancel, cancels the run. */
  async updateTaskStatus(taskId: string, status: Task["status"], statusMessage?: string): Promise<void> {
    if (status !== "cancelled") return;
    const run = await ownRun(this.services, this.tenantId, taskId);
    if (!TERMINAL_STATUSES.has(run.status)) await cancelRun(this.services, run, statusMessage ?? "Cancelled through MCP.");
  }

  /** The tenant's runs, newest first. */
  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const page = await this.services.listings.runs(this.tenantId, { limit: 50, cursor });
    return { tasks: page.items.map((run) => this.taskOf(run)), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  private async find(taskId: string): Promise<RunRecord | undefined> {
    try {
      return await ownRun(this.services, this.tenantId, taskId);
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  private taskOf(run: RunRecord): Task {
    const statusMessage =
      run.status === "awaiting_input"
        ? `Run ${run.runId} is waiting for a person: see the pending interrupts with get_run {"runId": "${run.runId}", "wait": false} and decide with the decide tool.`
        : run.error?.message;
    return {
      taskId: run.runId,
      status: TASK_STATUS[run.status],
      ttl: this.ttlMs,
      createdAt: run.createdAt,
      lastUpdatedAt: run.updatedAt,
      pollInterval: POLL_INTERVAL_MS,
      ...(statusMessage ? { statusMessage } : {}),
    };
  }
}
