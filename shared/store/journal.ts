import type { Inherited, JournalCommit, JournalRecord, RunJournal } from "../ports/journal.js";
import { keys } from "./keys.js";
import { expiresAt, sameTurnBatcher, type Table } from "./table.js";
import { stepItem, taskItem } from "./tasks.js";

type JournalItem = { sk: string; value?: unknown; parts?: number; part?: string; fingerprint?: string; inherited?: Inherited };
type Item = { pk: string; sk: string } & Record<string, unknown>;

/**
 * What each model call and tool call returned, per agent scope and round. Lambda and Step Functions
 * deliver at least once: a step that runs again replays these records instead of calling the
 * model or repeating a tool's side effects. The journal is also the agent's checkpoint: its
 * messages are rebuilt from it, so a turn can stop and the next one continue where it left off.
 */
export class Journal implements RunJournal {
  /** Loads asked for in one turn of the event loop, read together (see readScopes). */
  private readonly loader = sameTurnBatcher((wanted: readonly { runId: string; scope: string }[]) => this.readScopes(wanted));

  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  async read(runId: string, scope: string): Promise<JournalRecord[]> {
    return recordsOf(await this.loader.load({ runId, scope }));
  }

  /**
   * The items of each scope. Scopes of one family in one run ("task#0#s1.t1", "task#0#s1.t2": the
   * executors of one step, starting together) are read with one query of the family's prefix, each
   * scope taking its own items; a scope alone is read on its own, as before.
   */
  private async readScopes(wanted: readonly { runId: string; scope: string }[]): Promise<JournalItem[][]> {
    // A scope without a family ("react") is a family of its own.
    const familyOf = ({ runId, scope }: { runId: string; scope: string }) =>
      `${runId}\n${scope.includes("#") ? scope.slice(0, scope.lastIndexOf("#")) : scope}`;
    const families = new Map<string, { runId: string; scope: string }[]>();
    for (const load of wanted) families.set(familyOf(load), [...(families.get(familyOf(load)) ?? []), load]);
    const read = new Map<string, Promise<JournalItem[]>>();
    for (const [family, loads] of families) {
      const scopes = new Set(loads.map((load) => load.scope));
      const prefix = keys.journalScopePrefix(scopes.size === 1 ? loads[0].scope : family.slice(family.indexOf("\n") + 1));
      read.set(family, this.table.queryPrefix<JournalItem>(keys.journalPk(loads[0].runId), prefix));
    }
    return Promise.all(
      wanted.map(async (load) =>
        (await (read.get(familyOf(load)) ?? [])).filter((item) => item.sk.startsWith(keys.journalScopePrefix(load.scope))),
      ),
    );
  }

  async readRun(runId: string): Promise<JournalRecord[]> {
    return recordsOf(await this.table.queryPrefix<JournalItem>(keys.journalPk(runId), keys.journalRunPrefix));
  }

  /** Writes the commit's items together, 25 to a request (BatchWrite's limit), retrying unprocessed ones. */
  async commit(runId: string, { records, tasks = [], step }: JournalCommit): Promise<void> {
    const ttl = expiresAt(this.retentionDays);
    const all = [
      ...records.flatMap(({ value, fingerprint, inherited, ...call }) =>
        recordItems(keys.journal(runId, call), value, ttl, {
          ...(fingerprint ? { fingerprint } : {}),
          ...(inherited ? { inherited } : {}),
        }),
      ),
      ...tasks.map((task) => taskItem(runId, task, ttl)),
      ...(step ? [stepItem(runId, step, ttl)] : []),
    ];
    await this.table.batchWrite(all.map((Item) => ({ PutRequest: { Item } })));
  }
}

/** The records the items hold: a split record counts only with all its parts. */
function recordsOf(items: readonly JournalItem[]): JournalRecord[] {
  const records: JournalRecord[] = [];
  const bySk = new Map(items.map((item) => [item.sk, item]));
  for (const item of items) {
    if (item.part !== undefined && item.parts === undefined) continue; // a later part of a split record
    const call = {
      ...keys.journalCallOf(item.sk),
      ...(item.fingerprint ? { fingerprint: item.fingerprint } : {}),
      ...(item.inherited ? { inherited: item.inherited } : {}),
    };
    if (item.parts === undefined) {
      records.push({ ...call, value: item.value });
      continue;
    }
    const parts = Array.from({ length: item.parts }, (_, i) => (i === 0 ? item.part : bySk.get(keys.journalPart(item.sk, i))?.part));
    if (parts.some((part) => part === undefined)) continue; // torn write: treated as not recorded, so the call runs again
    records.push({ ...call, value: JSON.parse(parts.join("")) });
  }
  return records;
}

/** Characters of JSON per item of a split record (at most 4 bytes a character stays below 400 KB). */
const PART_CHARS = 90_000;

/**
 * A record as items: one, or — for a value too large for an item (a model's 400 KB answer, 450 KB
 * of tool arguments) — its JSON in parts, the first item saying how many. Replays stay exact.
 */
function recordItems(
  key: { pk: string; sk: string },
  value: unknown,
  ttl: number,
  about: Pick<JournalItem, "fingerprint" | "inherited">,
): Item[] {
  const json = JSON.stringify(value ?? null);
  if (json.length <= PART_CHARS) return [{ ...key, value, ttl, ...about }];
  const parts = Array.from({ length: Math.ceil(json.length / PART_CHARS) }, (_, i) => json.slice(i * PART_CHARS, (i + 1) * PART_CHARS));
  // Later parts first in the batch order does not matter: a record counts only with all its parts.
  return parts.map((part, i) =>
    i === 0 ? { ...key, parts: parts.length, part, ttl, ...about } : { pk: key.pk, sk: keys.journalPart(key.sk, i), part, ttl },
  );
}
