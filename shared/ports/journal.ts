/** A raw item written in one batch with journal records (e.g. the task record at a task's end). */
export type TableItem = { pk: string; sk: string } & Record<string, unknown>;

/** A model response, a tool result, an intent (a write tool about to run), or a memo. */
export type JournalKind = "llm" | "tool" | "intent" | "memo";

export interface JournalRecord {
  key: { pk: string; sk: string };
  value: unknown;
}

const pad = (n: number) => String(n).padStart(4, "0");

/** The journal's partition of a run (it grows with the run: apart from the run's own items). */
export const journalPk = (runId: string) => `RUN#${runId}#JRN`;

/** Where a journal record lives (the table's key shape, DESIGN §4). */
export const journalKey = (runId: string, scope: string, round: number, kind: JournalKind, callId = "") => ({
  pk: journalPk(runId),
  sk: `JRN#${scope}#${pad(round)}#${kind}${callId ? `#${callId}` : ""}`,
});
export const journalPrefix = (scope: string) => `JRN#${scope}#`;

/**
 * The journal port: what each model and tool call returned, per agent scope and round, so a step
 * that runs again replays instead of repeating. `writeAll` writes records and other items (task
 * records, step contexts) together. Adapter: Journal (DynamoDB); fake: shared/testing/memoryJournal.ts.
 */
export interface RunJournal {
  /** One scope's records (and those of scopes it prefixes: "plan#2" holds "plan#2#r1"). */
  load(runId: string, scope: string): Promise<ScopeJournal>;
  writeAll(records: JournalRecord[], items?: TableItem[]): Promise<void>;
}

/**
 * One scope's records, loaded once per turn. A record can be kept in memory and written with the
 * next `flush` (`defer`): what only a replay needs does not have to wait on the critical path, as
 * long as it is flushed before anything that a replay must not repeat (a write tool's side effect).
 */
export class ScopeJournal {
  constructor(
    private readonly journal: Pick<RunJournal, "writeAll">,
    private readonly runId: string,
    readonly scope: string,
    private readonly records: Map<string, unknown>,
    private readonly unwritten: JournalRecord[] = [],
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
    const key = journalKey(this.runId, this.scope, round, kind, callId);
    if (this.records.has(key.sk)) return { value: this.records.get(key.sk) as T, replayed: true };
    const value = await produce();
    this.records.set(key.sk, value);
    this.unwritten.push({ key, value });
    if (!options.defer) await this.flush();
    return { value, replayed: false };
  }

  /** Records a value now (without producing it), written with the next flush. */
  record(round: number, kind: JournalKind, callId: string, value: unknown): void {
    const key = journalKey(this.runId, this.scope, round, kind, callId);
    this.records.set(key.sk, value);
    this.unwritten.push({ key, value });
  }

  get(round: number, kind: JournalKind, callId = ""): unknown {
    return this.records.get(journalKey(this.runId, this.scope, round, kind, callId).sk);
  }

  /**
   * Writes the deferred records, with `items` in the same batch. A flush starts after the one
   * before it has ended, so a round's records are never stored without the rounds before them (a
   * replay after a crash sees a prefix of the rounds). A flush whose write failed puts its records
   * back: the next flush writes them.
   */
  flush(items: TableItem[] = []): Promise<void> {
    const write = this.writes.last.catch(() => undefined).then(async () => {
      const records = this.unwritten.splice(0);
      if (records.length === 0 && items.length === 0) return;
      try {
        await this.journal.writeAll(records, items);
      } catch (error) {
        this.unwritten.unshift(...records); // written with the next flush, or replayed as missing
        throw error;
      }
    });
    this.writes.last = write;
    return write;
  }

  /** Whether round `round` has any record of this kind (any call). */
  hasAny(round: number, kind: JournalKind): boolean {
    const prefix = journalKey(this.runId, this.scope, round, kind).sk;
    for (const sk of this.records.keys()) if (sk === prefix || sk.startsWith(`${prefix}#`)) return true;
    return false;
  }

  /** What the recorded model calls cost: every model response this scope holds, and the tool calls they asked for. */
  usage(): { promptTokens: number; completionTokens: number; llmCalls: number; toolCalls: number; fallbackCalls?: number } {
    const total: ReturnType<ScopeJournal["usage"]> = { promptTokens: 0, completionTokens: 0, llmCalls: 0, toolCalls: 0 };
    for (const [sk, value] of this.records) {
      if (!sk.endsWith("#llm")) continue;
      const response = value as { usage?: { promptTokens?: number; completionTokens?: number }; toolCalls?: unknown[]; failedCalls?: number; fallback?: boolean };
      if (response.fallback) total.fallbackCalls = (total.fallbackCalls ?? 0) + 1;
      total.promptTokens += response.usage?.promptTokens ?? 0;
      total.completionTokens += response.usage?.completionTokens ?? 0;
      total.llmCalls += 1 + (response.failedCalls ?? 0);
      total.toolCalls += response.toolCalls?.length ?? 0;
    }
    return total;
  }

  has(round: number, kind: JournalKind, callId = ""): boolean {
    return this.records.has(journalKey(this.runId, this.scope, round, kind, callId).sk);
  }
}
