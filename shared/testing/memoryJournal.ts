import { ScopeJournal } from "../agent/scopeJournal.js";
import { type JournalCommit, type RunJournal, scopeEntryPrefix } from "../ports/journal.js";
import { stored } from "./clone.js";
import type { MemoryTasks } from "./memoryTasks.js";

/** The journal port in memory: entries per run by id, loaded by scope, committed with task records and step contexts. */
export class MemoryJournal implements RunJournal {
  /** Entries by run, then id. */
  readonly entries = new Map<string, Map<string, unknown>>();
  /** Commits written, for assertions. */
  commits = 0;

  /** `tasks`: where the task records and step contexts of commits go. */
  constructor(private readonly tasks?: MemoryTasks) {}

  async load(runId: string, scope: string): Promise<ScopeJournal> {
    const all = this.entries.get(runId) ?? new Map<string, unknown>();
    const mine = new Map([...all].filter(([id]) => id.startsWith(scopeEntryPrefix(scope))).map(([id, value]) => [id, stored(value)]));
    return new ScopeJournal(this, runId, scope, mine);
  }

  async commit(runId: string, { entries, tasks = [], step }: JournalCommit): Promise<void> {
    if (tasks.length || step) {
      const keeper = this.tasks;
      if (!keeper) throw new Error("this journal fake was made without a tasks fake to keep task records");
      for (const task of tasks) await keeper.put(runId, task);
      if (step) keeper.putStep(runId, step);
    }
    const kept = this.entries.get(runId) ?? new Map<string, unknown>();
    this.entries.set(runId, kept);
    for (const { id, value } of entries) kept.set(id, stored(value));
    this.commits++;
  }
}
