import { keys } from "./keys.js";
import { expiresAt, type Table } from "./table.js";

/** A raw item for a batch write alongside journal records (e.g. the task record at a task's end). */
export type TableItem = { pk: string; sk: string } & Record<string, unknown>;

/**
 * What each model call and tool call returned, per agent scope and round. Lambda and Step Functions
 * deliver at least once: a step that runs again replays these records instead of calling the
 * model or repeating a tool's side effects. The journal is also the agent's checkpoint: its
 * messages are rebuilt from it, so a turn can stop and the next one continue where it left off.
 */
export class Journal {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  async load(runId: string, scope: string): Promise<ScopeJournal> {
    const items = await this.table.queryPrefix<{ sk: string; value?: unknown; parts?: number; part?: string }>(keys.journalPk(runId), keys.journalPrefix(scope));
    const records = new Map<string, unknown>();
    const bySk = new Map(items.map((item) => [item.sk, item]));
    for (const item of items) {
      if (item.part !== undefined && item.parts === undefined) continue; // a later part of a split record
      if (item.parts === undefined) {
        records.set(item.sk, item.value);
        continue;
      }
      const parts = Array.from({ length: item.parts }, (_, i) => (i === 0 ? item.part : bySk.get(partSk(item.sk, i))?.part));
      if (parts.some((part) => part === undefined)) continue; // torn write: treated as not recorded, so the call runs again
      records.set(item.sk, JSON.parse(parts.join("")));
    }
    return new ScopeJournal(this, runId, scope, records);
  }

  /** Writes records and other items together, 25 to a request (BatchWrite's limit), retrying unprocessed ones. */
  async writeAll(records: { key: { pk: string; sk: string }; value: unknown }[], items: TableItem[] = []): Promise<void> {
    const ttl = expiresAt(this.retentionDays);
    const all = [...records.flatMap(({ key, value }) => recordItems(key, value, ttl)), ...items];
    await this.table.batchWrite(all.map((Item) => ({ PutRequest: { Item } })));
  }
}

/** Characters of JSON per item of a split record (at most 4 bytes a character stays below 400 KB). */
const PART_CHARS = 90_000;
const partSk = (sk: string, i: number) => `${sk}#~part${String(i).padStart(3, "0")}`;

/**
 * A record as items: one, or — for a value too large for an item (a model's 400 KB answer, 450 KB
 * of tool arguments) — its JSON in parts, the first item saying how many. Replays stay exact.
 */
function recordItems(key: { pk: string; sk: string }, value: unknown, ttl: number): TableItem[] {
  const json = JSON.stringify(value ?? null);
  if (json.length <= PART_CHARS) return [{ ...key, value, ttl }];
  const parts = Array.from({ length: Math.ceil(json.length / PART_CHARS) }, (_, i) => json.slice(i * PART_CHARS, (i + 1) * PART_CHARS));
  // Later parts first in the batch order does not matter: a record counts only with all its parts.
  return parts.map((part, i) => (i === 0 ? { ...key, parts: parts.length, part, ttl } : { pk: key.pk, sk: partSk(key.sk, i), part, ttl }));
}

/** A model response, a tool result, an intent (a write tool about to run), or a memo. */
export type JournalKind = "llm" | "tool" | "intent" | "memo";

/**
 * One scope's records, loaded once per turn. A record can be kept in memory and written with the
 * next `flush` (`defer`): what only a replay needs does not have to wait on the critical path, as
 * long as it is flushed before anything that a replay must not repeat (a write tool's side effect).
 */
export class ScopeJournal {
  constructor(
    private readonly journal: Journal,
    private readonly runId: string,
    readonly scope: string,
    private readonly records: Map<string, unknown>,
    private readonly unwritten: { key: { pk: string; sk: string }; value: unknown }[] = [],
  ) {}

  /**
   * The journal of another scope whose records were loaded with this one (`load` by a common
   * prefix, e.g. "plan#2" holds "plan#2#r1"): records and unwritten writes are shared.
   */
  scoped(scope: string): ScopeJournal {
    if (scope === this.scope) return this;
    return new ScopeJournal(this.journal, this.runId, scope, this.records, this.unwritten);
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
    const key = keys.journal(this.runId, this.scope, round, kind, callId);
    if (this.records.has(key.sk)) return { value: this.records.get(key.sk) as T, replayed: true };
    const value = await produce();
    this.records.set(key.sk, value);
    this.unwritten.push({ key, value });
    if (!options.defer) await this.flush();
    return { value, replayed: false };
  }

  /** Records a value now (without producing it), written with the next flush. */
  record(round: number, kind: JournalKind, callId: string, value: unknown): void {
    const key = keys.journal(this.runId, this.scope, round, kind, callId);
    this.records.set(key.sk, value);
    this.unwritten.push({ key, value });
  }

  get(round: number, kind: JournalKind, callId = ""): unknown {
    return this.records.get(keys.journal(this.runId, this.scope, round, kind, callId).sk);
  }

  /** Writes the deferred records, with `items` in the same batch. */
  async flush(items: TableItem[] = []): Promise<void> {
    const records = this.unwritten.splice(0);
    if (records.length === 0 && items.length === 0) return;
    try {
      await this.journal.writeAll(records, items);
    } catch (error) {
      this.unwritten.unshift(...records); // written with the next flush, or replayed as missing
      throw error;
    }
  }

  /** Whether round `round` has any record of this kind (any call). */
  hasAny(round: number, kind: JournalKind): boolean {
    const prefix = keys.journal(this.runId, this.scope, round, kind).sk;
    for (const sk of this.records.keys()) if (sk === prefix || sk.startsWith(`${prefix}#`)) return true;
    return false;
  }

  /** What the recorded model calls cost: every model response this scope holds, and the tool calls they asked for. */
  usage(): { promptTokens: number; completionTokens: number; llmCalls: number; toolCalls: number } {
    const total = { promptTokens: 0, completionTokens: 0, llmCalls: 0, toolCalls: 0 };
    for (const [sk, value] of this.records) {
      if (!sk.endsWith("#llm")) continue;
      const response = value as { usage?: { promptTokens?: number; completionTokens?: number }; toolCalls?: unknown[]; failedCalls?: number };
      total.promptTokens += response.usage?.promptTokens ?? 0;
      total.completionTokens += response.usage?.completionTokens ?? 0;
      total.llmCalls += 1 + (response.failedCalls ?? 0);
      total.toolCalls += response.toolCalls?.length ?? 0;
    }
    return total;
  }

  has(round: number, kind: JournalKind, callId = ""): boolean {
    return this.records.has(keys.journal(this.runId, this.scope, round, kind, callId).sk);
  }
}
