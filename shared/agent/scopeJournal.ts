import { type JournalCommit, type JournalEntry, type JournalKind, journalEntryId, type RunJournal } from "../ports/journal.js";

/**
 * One scope's records, loaded once per turn. A record can be kept in memory and written with the
 * next `flush` (`defer`): what only a replay needs does not have to wait on the critical path, as
 * long as it is flushed before anything that a replay must not repeat (a write tool's side effect).
 */
export class ScopeJournal {
  constructor(
    private readonly journal: Pick<RunJournal, "commit">,
    private readonly runId: string,
    readonly scope: string,
    /** Values by entry id. */
    private readonly records: Map<string, unknown>,
    private readonly unwritten: JournalEntry[] = [],
    private readonly writes: { last: Promise<void> } = { last: Promise.resolve() },
  ) {}

  /**
   * The journal of another scope whose records were loaded with this one (`load` by a common
   * prefix, e.g. "plan#2" holds "plan#2#r1"): records and unwritten writes are shared.
   */
  scoped(scope: string): ScopeJournal {
    if (scope === this.scope) return this;
    return new ScopeJournal(this.journal, this.runId, scope, this.records, this.unwritten, this.writes);
  }

  get size(): number {
    return this.records.size;
  }

  /** The recorded value, or run `produce`, record and return it. */
  async once<T>(
    round: number,
    kind: JournalKind,
    callId: string,
    produce: () => Promise<T>,
    options: { defer?: boolean } = {},
  ): Promise<{ value: T; replayed: boolean }> {
    const id = journalEntryId(this.scope, round, kind, callId);
    if (this.records.has(id)) return { value: this.records.get(id) as T, replayed: true };
    const value = await produce();
    this.records.set(id, value);
    this.unwritten.push({ id, value });
    if (!options.defer) await this.flush();
    return { value, replayed: false };
  }

  /** Records a value now (without producing it), written with the next flush. */
  record(round: number, kind: JournalKind, callId: string, value: unknown): void {
    const id = journalEntryId(this.scope, round, kind, callId);
    this.records.set(id, value);
    this.unwritten.push({ id, value });
  }

  get(round: number, kind: JournalKind, callId = ""): unknown {
    return this.records.get(journalEntryId(this.scope, round, kind, callId));
  }

  /**
   * Writes the deferred records, with `also` (task records, a step context) in the same commit. A flush starts after the one
   * before it has ended, so a round's records are never stored without the rounds before them (a
   * replay after a crash sees a prefix of the rounds). A flush whose write failed puts its records
   * back: the next flush writes them.
   */
  flush(also: Omit<JournalCommit, "entries"> = {}): Promise<void> {
    const write = this.writes.last
      .catch(() => undefined)
      .then(async () => {
        const entries = this.unwritten.splice(0);
        if (entries.length === 0 && !also.tasks?.length && !also.step) return;
        try {
          await this.journal.commit(this.runId, { entries, ...also });
        } catch (error) {
          this.unwritten.unshift(...entries); // written with the next flush, or replayed as missing
          throw error;
        }
      });
    this.writes.last = write;
    return write;
  }

  /** Whether round `round` has any record of this kind (any call). */
  hasAny(round: number, kind: JournalKind): boolean {
    const prefix = journalEntryId(this.scope, round, kind);
    for (const id of this.records.keys()) if (id === prefix || id.startsWith(`${prefix}#`)) return true;
    return false;
  }

  /** What the recorded model calls cost: every model response this scope holds, and the tool calls they asked for. */
  usage(): { promptTokens: number; completionTokens: number; llmCalls: number; toolCalls: number; fallbackCalls?: number } {
    const total: ReturnType<ScopeJournal["usage"]> = { promptTokens: 0, completionTokens: 0, llmCalls: 0, toolCalls: 0 };
    for (const [id, value] of this.records) {
      if (!id.endsWith("#llm")) continue;
      const response = value as {
        usage?: { promptTokens?: number; completionTokens?: number };
        toolCalls?: unknown[];
        failedCalls?: number;
        fallback?: boolean;
      };
      if (response.fallback) total.fallbackCalls = (total.fallbackCalls ?? 0) + 1;
      total.promptTokens += response.usage?.promptTokens ?? 0;
      total.completionTokens += response.usage?.completionTokens ?? 0;
      total.llmCalls += 1 + (response.failedCalls ?? 0);
      total.toolCalls += response.toolCalls?.length ?? 0;
    }
    return total;
  }

  has(round: number, kind: JournalKind, callId = ""): boolean {
    return this.records.has(journalEntryId(this.scope, round, kind, callId));
  }
}
