import { journalPk, journalPrefix, ScopeJournal, type JournalRecord, type RunJournal, type TableItem } from "../ports/journal.js";
import { stored } from "./clone.js";

/** A fake that takes the items the journal writes with its records (task records, step contexts). */
export interface ItemSink {
  /** Whether the item was the sink's. */
  accept(item: TableItem): boolean;
}

/** The journal port in memory: records per run by key, loaded by scope prefix, written in one batch with items. */
export class MemoryJournal implements RunJournal {
  /** Records by partition and key, as the table holds them. */
  readonly records = new Map<string, Map<string, unknown>>();
  /** Batches written (each `writeAll`), for assertions. */
  writes = 0;

  constructor(private readonly sinks: ItemSink[] = []) {}

  async load(runId: string, scope: string): Promise<ScopeJournal> {
    const prefix = journalPrefix(scope);
    const all = this.records.get(journalPk(runId)) ?? new Map<string, unknown>();
    const mine = new Map([...all].filter(([sk]) => sk.startsWith(prefix)).map(([sk, value]) => [sk, stored(value)]));
    return new ScopeJournal(this, runId, scope, mine);
  }

  async writeAll(records: JournalRecord[], items: TableItem[] = []): Promise<void> {
    const unclaimed = items.filter((item) => !this.sinks.some((sink) => sink.accept(stored(item))));
    if (unclaimed.length) throw new Error(`no fake takes the item ${unclaimed[0]!.sk}`);
    for (const { key, value } of records) {
      if (!this.records.has(key.pk)) this.records.set(key.pk, new Map());
      this.records.get(key.pk)!.set(key.sk, stored(value));
    }
    this.writes++;
  }
}
