import { type JournalCommit, type JournalRecord, type RunJournal, sameCall, withinScope } from "../ports/journal.js";
import { stored } from "./clone.js";
import type { MemoryTasks } from "./memoryTasks.js";

/** The journal port in memory: each run's records, read by scope, committed with task records and step contexts. */
export class MemoryJournal implements RunJournal {
  /** Records by run. */
  readonly records = new Map<string, JournalRecord[]>();
  /** Commits written, for assertions. */
  commits = 0;

  /** `tasks`: where the task records and step contexts of commits go. */
  constructor(private readonly tasks?: MemoryTasks) {}

  async read(runId: string, scope: string): Promise<JournalRecord[]> {
    return stored((this.records.get(runId) ?? []).filter((record) => withinScope(record.scope, scope)));
  }

  async readRun(runId: string): Promise<JournalRecord[]> {
    return stored(this.records.get(runId) ?? []);
  }

  async commit(runId: string, { records, tasks = [], step }: JournalCommit): Promise<void> {
    if (tasks.length || step) {
      const keeper = this.tasks;
      if (!keeper) throw new Error("this journal fake was made without a tasks fake to keep task records");
      for (const task of tasks) await keeper.put(runId, task);
      if (step) keeper.putStep(runId, step);
    }
    const kept = this.records.get(runId) ?? [];
    this.records.set(runId, kept);
    // As the adapter reads them back: an empty call id is no call id.
    for (const { callId, ...call } of stored(records)) {
      const record: JournalRecord = callId ? { ...call, callId } : call;
      const earlier = kept.findIndex((other) => sameCall(other, record));
      if (earlier >= 0) kept[earlier] = record;
      else kept.push(record);
    }
    this.commits++;
  }
}
