import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { RunRecord, type RunStatus, type Usage } from "../contracts/run.js";
import { keys } from "./keys.js";
import { expiresAt, itemData, type Table } from "./table.js";

type Patch = Partial<Omit<RunRecord, "runId" | "tenantId" | "schemaVersion" | "usage" | "createdAt">>;

export class RunStore {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  /** Creates the run; false if a run with this id exists already. */
  async create(run: RunRecord): Promise<boolean> {
    try {
      await this.table.doc.send(
        new PutCommand({
          TableName: this.table.name,
          Item: { ...keys.run(run.runId), ...RunRecord.parse(run), eventSeq: 0, ttl: expiresAt(this.retentionDays) },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    const { Item } = await this.table.doc.send(
      new GetCommand({ TableName: this.table.name, Key: keys.run(runId), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    return RunRecord.parse(itemData(Item, "eventSeq"));
  }

  /**
   * Sets fields; with `onlyIf`, only while the run is in one of those statuses (so a late step
   * cannot overwrite a run that was cancelled or has ended). Returns whether it applied.
   */
  async update(runId: string, patch: Patch, onlyIf?: readonly RunStatus[]): Promise<boolean> {
    const applied = await this.table.setIf(keys.run(runId), { ...patch, updatedAt: new Date().toISOString() }, statusCondition(onlyIf));
    return applied !== undefined;
  }

  /**
   * Ends the run, once: sets the terminal fields and takes the terminal event's sequence number in
   * the same conditional write, which also closes the event log (later appends are refused).
   * Returns the terminal event's number, or undefined if the run had already ended.
   */
  async end(runId: string, patch: Patch, from: readonly RunStatus[]): Promise<number | undefined> {
    const condition = statusCondition(from);
    // Both read the old eventSeq: the terminal event takes the next number.
    const applied = await this.table.setIf(keys.run(runId), { ...patch, updatedAt: new Date().toISOString() }, { ...condition, values: { ...condition.values, ":one": 1 } }, [
      "eventSeq = eventSeq + :one",
      "terminalSeq = eventSeq + :one",
    ]);
    return applied === undefined ? undefined : Number(applied.terminalSeq);
  }

  /**
   * Reopens an ended run (resume after a failure): running again, its event log open, its slot
   * taken again (released once more when it ends). Returns whether it applied.
   */
  async reopen(runId: string, from: readonly RunStatus[]): Promise<boolean> {
    const condition = statusCondition(from);
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.run(runId),
          UpdateExpression: "SET #status = :running, updatedAt = :now REMOVE terminalSeq, endedAt, #error, slotReleased, stateTransitions",
          ConditionExpression: condition.expression,
          ExpressionAttributeNames: { ...condition.names, "#status": "status", "#error": "error" },
          ExpressionAttributeValues: { ...condition.values, ":running": "running", ":now": new Date().toISOString() },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** Adds to the usage counters atomically (parallel executors add at once). */
  async addUsage(runId: string, delta: Partial<Usage>): Promise<void> {
    const entries = Object.entries(delta).filter(([, v]) => v);
    if (entries.length === 0) return;
    await this.table.doc.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: keys.run(runId),
        UpdateExpression: `ADD ${entries.map((_, i) => `#usage.#u${i} :u${i}`).join(", ")}`,
        ExpressionAttributeNames: { "#usage": "usage", ...Object.fromEntries(entries.map(([k], i) => [`#u${i}`, k])) },
        ExpressionAttributeValues: Object.fromEntries(entries.map(([, v], i) => [`:u${i}`, v])),
      }),
    );
  }
}

/** The run exists and, if given, is in one of these statuses. */
function statusCondition(statuses?: readonly RunStatus[]) {
  if (!statuses) return { expression: "attribute_exists(pk)" };
  const values = Object.fromEntries(statuses.map((status, i) => [`:s${i}`, status]));
  return {
    expression: `attribute_exists(pk) AND #status IN (${Object.keys(values).join(", ")})`,
    names: { "#status": "status" },
    values,
  };
}
