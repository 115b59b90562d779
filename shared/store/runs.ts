import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { RunRecord, type RunStatus, type Usage } from "../contracts/run.js";
import { keys } from "./keys.js";
import { expiresAt, type Table } from "./table.js";

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
    return RunRecord.parse(stripKeys(Item));
  }

  /**
   * Sets fields; with `onlyIf`, only while the run is in one of those statuses (so a late step
   * cannot overwrite a run that was cancelled or has ended). Returns whether it applied.
   */
  async update(runId: string, patch: Patch, onlyIf?: readonly RunStatus[]): Promise<boolean> {
    const entries = Object.entries({ ...patch, updatedAt: new Date().toISOString() }).filter(([, v]) => v !== undefined);
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const sets = entries.map(([field, value], i) => {
      names[`#f${i}`] = field;
      values[`:v${i}`] = value;
      return `#f${i} = :v${i}`;
    });
    let condition = "attribute_exists(pk)";
    if (onlyIf) {
      names["#status"] = "status";
      const placeholders = onlyIf.map((status, i) => {
        values[`:s${i}`] = status;
        return `:s${i}`;
      });
      condition += ` AND #status IN (${placeholders.join(", ")})`;
    }
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.run(runId),
          UpdateExpression: `SET ${sets.join(", ")}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /**
   * Ends the run, once: sets the terminal fields and takes the terminal event's sequence number in
   * the same conditional write, which also closes the event log (later appends are refused).
   * Returns the terminal event's number, or undefined if the run had already ended.
   */
  async end(runId: string, patch: Patch, from: readonly RunStatus[]): Promise<number | undefined> {
    const entries = Object.entries({ ...patch, updatedAt: new Date().toISOString() }).filter(([, v]) => v !== undefined);
    const names: Record<string, string> = { "#status": "status" };
    const values: Record<string, unknown> = { ":one": 1 };
    const sets = entries.map(([field, value], i) => {
      names[`#f${i}`] = field;
      values[`:v${i}`] = value;
      return `#f${i} = :v${i}`;
    });
    const allowed = from.map((status, i) => {
      values[`:s${i}`] = status;
      return `:s${i}`;
    });
    try {
      const { Attributes } = await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.run(runId),
          // Both read the old eventSeq: the terminal event takes the next number.
          UpdateExpression: `SET ${[...sets, "eventSeq = eventSeq + :one", "terminalSeq = eventSeq + :one"].join(", ")}`,
          ConditionExpression: `attribute_exists(pk) AND #status IN (${allowed.join(", ")})`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: "UPDATED_NEW",
        }),
      );
      return Number(Attributes?.terminalSeq);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
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

export function stripKeys(item: Record<string, unknown>): Record<string, unknown> {
  const { pk: _pk, sk: _sk, ttl: _ttl, eventSeq: _seq, ...rest } = item;
  return rest;
}
