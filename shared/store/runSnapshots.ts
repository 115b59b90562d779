import type { RunSnapshot, RunSnapshots } from "../ports/runSnapshots.js";
import { compareTasks, type TaskRecord } from "../ports/tasks.js";
import { metaOf } from "./fileMeta.js";
import { interruptOf } from "./interrupts.js";
import { keys } from "./keys.js";
import { runRecordOf } from "./runs.js";
import type { Table } from "./table.js";

/**
 * Reads a run with its tasks, files and interrupts in one Query of the run's partition (events
 * and the journal live in partitions of their own, so it stays small; a second page only past
 * 1 MB). Step contexts and webhook deliveries share the partition and are left out here (DynamoDB
 * cannot filter on the sort key, and they are few).
 */
export class RunSnapshotStore implements RunSnapshots {
  constructor(private readonly table: Table) {}

  async get(runId: string): Promise<RunSnapshot | undefined> {
    const items: Record<string, unknown>[] = [];
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.table.query({
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": keys.runPk(runId) },
        ExclusiveStartKey: exclusiveStartKey,
        ConsistentRead: true,
      });
      items.push(...(page.Items ?? []));
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey);
    const meta = items.find((item) => item.sk === keys.run(runId).sk);
    if (!meta) return undefined;
    const startsWith = (prefix: string) => items.filter((item) => String(item.sk).startsWith(prefix));
    return {
      run: runRecordOf(meta),
      tasks: (startsWith(keys.taskPrefix()) as unknown as TaskRecord[]).sort(compareTasks),
      files: startsWith(keys.filePrefix).map(metaOf),
      interrupts: startsWith(keys.interruptPrefix).map(interruptOf),
    };
  }
}
