import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { keys } from "./keys.js";
import { expiresAt, type Table } from "./table.js";

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
    const items = await this.table.queryPrefix<{ sk: string; value: unknown }>(`RUN#${runId}`, keys.journalPrefix(scope));
    return new ScopeJournal(this, runId, scope, new Map(items.map((item) => [item.sk, item.value])));
  }

  async write(key: { pk: string; sk: string }, value: unknown): Promise<void> {
    await this.table.doc.send(
      new PutCommand({ TableName: this.table.name, Item: { ...key, value, ttl: expiresAt(this.retentionDays) } }),
    );
  }
}

/** A model response, a tool result, or a memo (what an agent started from, e.g. its forked memory). */
export type JournalKind = "llm" | "tool" | "memo";

/** One scope's records, loaded once per turn. */
export class ScopeJournal {
  constructor(
    private readonly journal: Journal,
    private readonly runId: string,
    readonly scope: string,
    private readonly records: Map<string, unknown>,
  ) {}

  get size(): number {
    return this.records.size;
  }

  /** The recorded value, or run `produce`, record and return it. */
  async once<T>(round: number, kind: JournalKind, callId: string, produce: () => Promise<T>): Promise<{ value: T; replayed: boolean }> {
    const key = keys.journal(this.runId, this.scope, round, kind, callId);
    if (this.records.has(key.sk)) return { value: this.records.get(key.sk) as T, replayed: true };
    const value = await produce();
    await this.journal.write(key, value);
    this.records.set(key.sk, value);
    return { value, replayed: false };
  }

  has(round: number, kind: JournalKind, callId = ""): boolean {
    return this.records.has(keys.journal(this.runId, this.scope, round, kind, callId).sk);
  }
}
