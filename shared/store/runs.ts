import { RunRecord, type RunStatus, type Usage } from "../contracts/run.js";
import { readVersioned } from "../contracts/schemaVersion.js";
import type { RunPatch, Runs } from "../ports/runs.js";
import { keys } from "./keys.js";
import { expiresAt, ifConditionHolds, itemData, type Table, updatedItem } from "./table.js";

type Patch = RunPatch;

export class RunStore implements Runs {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  /** Creates the run; false if a run with this id exists already. */
  async create(run: RunRecord): Promise<boolean> {
    const written = await ifConditionHolds(
      this.table.putItem({
        Item: { ...keys.run(run.runId), ...RunRecord.parse(run), ...keys.runListing(run), ttl: expiresAt(this.retentionDays) },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
    return written !== undefined;
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    const { Item } = await this.table.getItem({ Key: keys.run(runId), ConsistentRead: true });
    return Item ? runRecordOf(Item) : undefined;
  }

  /** queued → running, once; returns the run as it is now, or undefined if it was not queued (a repeated start). */
  async startIfQueued(runId: string): Promise<RunRecord | undefined> {
    const condition = statusCondition(["queued"]);
    const updated = await ifConditionHolds(
      this.table.updateItem({
        Key: keys.run(runId),
        UpdateExpression: "SET #status = :running, updatedAt = :now",
        ConditionExpression: condition.expression,
        ExpressionAttributeNames: condition.names,
        ExpressionAttributeValues: { ...condition.values, ":running": "running", ":now": new Date().toISOString() },
        ReturnValues: "ALL_NEW",
      }),
    );
    if (!updated) return undefined;
    return runRecordOf(updatedItem(updated));
  }

  /** Only the status (a cheap read, for agents checking between rounds whether the run has ended). */
  async status(runId: string): Promise<RunStatus | undefined> {
    // Agents of one run that check at the same time share one request (see getConsistent).
    const item = await this.table.getConsistent<{ status?: RunStatus }>(keys.run(runId), ["status"]);
    return item?.status;
  }

  /**
   * Sets fields; with `onlyIf`, only while the run is in one of those statuses (so a late step
   * cannot overwrite a run that was cancelled or has ended). Returns whether it applied.
   */
  async update(runId: string, patch: Patch, onlyIf?: readonly RunStatus[], usage?: Partial<Usage>): Promise<boolean> {
    const { sets, names, values } = usageSets(usage);
    const condition = statusCondition(onlyIf);
    const applied = await this.table.setIf(
      keys.run(runId),
      { ...patch, updatedAt: new Date().toISOString() },
      { ...condition, names: { ...condition.names, ...names }, values: { ...condition.values, ...values } },
      sets,
    );
    return applied !== undefined;
  }

  /**
   * Ends the run, once: sets the terminal fields if the run is in one of `from`, and claims the
   * tenant's slot for release in the same write (so it is given back once, however often ending is
   * retried). Returns the run as it is now, or undefined if it had already ended.
   */
  async end(runId: string, patch: Patch, from: readonly RunStatus[]): Promise<RunRecord | undefined> {
    const condition = statusCondition(from);
    const fields = Object.entries(patch).filter(([, v]) => v !== undefined);
    const updated = await ifConditionHolds(
      this.table.updateItem({
        Key: keys.run(runId),
        UpdateExpression: `SET ${fields.map((_, i) => `#p${i} = :p${i}, `).join("")}#updatedAt = :now, slotReleased = :true`,
        ConditionExpression: condition.expression,
        ExpressionAttributeNames: {
          ...condition.names,
          ...Object.fromEntries(fields.map(([k], i) => [`#p${i}`, k])),
          "#updatedAt": "updatedAt",
        },
        ExpressionAttributeValues: {
          ...condition.values,
          ...Object.fromEntries(fields.map(([, v], i) => [`:p${i}`, v])),
          ":now": new Date().toISOString(),
          ":true": true,
        },
        ReturnValues: "ALL_NEW",
      }),
    );
    if (!updated) return undefined;
    return runRecordOf(updatedItem(updated));
  }

  /**
   * Reopens an ended run (resume after a failure): running again, its event log open, its slot
   * taken again (released once more when it ends). Returns whether it applied.
   */
  async reopen(runId: string, from: readonly RunStatus[]): Promise<boolean> {
    const condition = statusCondition(from);
    const written = await ifConditionHolds(
      this.table.updateItem({
        Key: keys.run(runId),
        UpdateExpression: "SET #status = :running, updatedAt = :now REMOVE terminalSeq, endedAt, #error, slotReleased, stateTransitions",
        ConditionExpression: condition.expression,
        ExpressionAttributeNames: { ...condition.names, "#status": "status", "#error": "error" },
        ExpressionAttributeValues: { ...condition.values, ":running": "running", ":now": new Date().toISOString() },
      }),
    );
    return written !== undefined;
  }

  /** Adds to the usage counters atomically (parallel executors add at once). */
  async addUsage(runId: string, delta: Partial<Usage>): Promise<void> {
    const entries = Object.entries(delta).filter(([, v]) => v);
    if (entries.length === 0) return;
    await this.table.updateItem({
      Key: keys.run(runId),
      UpdateExpression: `ADD ${entries.map((_, i) => `#usage.#u${i} :u${i}`).join(", ")}`,
      ExpressionAttributeNames: { "#usage": "usage", ...Object.fromEntries(entries.map(([k], i) => [`#u${i}`, k])) },
      ExpressionAttributeValues: Object.fromEntries(entries.map(([, v], i) => [`:u${i}`, v])),
    });
  }

  async countFork(runId: string): Promise<boolean> {
    const written = await ifConditionHolds(
      this.table.updateItem({
        Key: keys.run(runId),
        UpdateExpression: "ADD forkCount :one",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":one": 1 },
      }),
    );
    return written !== undefined;
  }
}

/** `usage.x = usage.x + n` for each counter, as SET clauses (they join the other fields' update). */
function usageSets(usage: Partial<Usage> = {}) {
  const entries = Object.entries(usage).filter(([, v]) => v);
  return {
    sets: entries.map((_, i) => `#usage.#u${i} = if_not_exists(#usage.#u${i}, :zero) + :u${i}`),
    names: entries.length ? { "#usage": "usage", ...Object.fromEntries(entries.map(([k], i) => [`#u${i}`, k])) } : {},
    values: entries.length ? { ":zero": 0, ...Object.fromEntries(entries.map(([, v], i) => [`:u${i}`, v])) } : {},
  };
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

/** The run record from its item. eventSeq and slotReleased: bookkeeping of older versions and of endRun, not part of the record. */
export function runRecordOf(item: Record<string, unknown>): RunRecord {
  return readVersioned(RunRecord, `run ${String(item.runId)}`, itemData(item, "eventSeq", "slotReleased"));
}
