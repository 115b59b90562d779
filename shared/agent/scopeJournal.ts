import type { UndoneCall } from "../contracts/events.js";
import type { ChatMessage } from "../llm/types.js";
import type { JournalCall, JournalCommit, JournalKind, JournalRecord, RunJournal } from "../ports/journal.js";
import { type Divergence, ReplayDivergedError, recordDivergence } from "../run/replayDivergence.js";
import { firstDifferentMessage } from "./requestFingerprint.js";

/** A call's place in a scope's map of records (in memory only). */
const callKey = ({ scope, round, kind, callId }: JournalCall) => JSON.stringify([scope, round, kind, callId ?? ""]);

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
    /** The records read, of this scope and the scopes within it. */
    loaded: readonly JournalRecord[] = [],
    /** Records by call (see callKey), shared with the scoped journals. */
    private readonly records: Map<string, JournalRecord> = new Map(loaded.map((record) => [callKey(record), record])),
    private readonly unwritten: JournalRecord[] = [],
    private readonly writes: { last: Promise<void> } = { last: Promise.resolve() },
  ) {}

  /** The scope's records (and those of the scopes within it), read from the journal port. */
  static async load(journal: RunJournal, runId: string, scope: string): Promise<ScopeJournal> {
    return new ScopeJournal(journal, runId, scope, await journal.read(runId, scope));
  }

  /**
   * The journal of another scope whose records were loaded with this one (a scope loads those
   * within it: "plan#2" holds "plan#2#r1"): records and unwritten writes are shared.
   */
  scoped(scope: string): ScopeJournal {
    if (scope === this.scope) return this;
    return new ScopeJournal(this.journal, this.runId, scope, [], this.records, this.unwritten, this.writes);
  }

  /** The records this run made (not those it inherited). */
  get size(): number {
    let own = 0;
    for (const record of this.records.values()) if (!record.inherited) own++;
    return own;
  }

  /**
   * The recorded value, or run `produce`, record and return it (unless `keep` says the value is no
   * outcome to keep). A value inherited from the run this one replays or forks is returned as new
   * (`replayed` false: its events are shown again) but `inherited`: it was paid for there. In a
   * replay a call the journal lacks, or a model call made with another request (`fingerprint`), is
   * never made: the replay stops there (ReplayDivergedError).
   */
  async once<T>(
    round: number,
    kind: JournalKind,
    callId: string,
    produce: () => Promise<T>,
    options: {
      defer?: boolean;
      keep?: (value: T) => boolean;
      fingerprint?: string;
      /** The model request `fingerprint` was taken of: a divergence names its first differing message. */
      prompt?: readonly ChatMessage[];
    } = {},
  ): Promise<{ value: T; replayed: boolean; inherited?: boolean }> {
    const call = this.call(round, kind, callId);
    const recorded = this.records.get(callKey(call));
    if (recorded && !recorded.inherited) return { value: recorded.value as T, replayed: true };
    if (recorded?.inherited === "replay" && options.fingerprint && recorded.fingerprint && recorded.fingerprint !== options.fingerprint)
      await this.diverged({
        ...call,
        reason: "different_request",
        recorded: { fingerprint: recorded.fingerprint, value: recorded.value },
        replayed: { fingerprint: options.fingerprint, ...differing(options.prompt, recorded.fingerprint) },
      });
    if (recorded) return { value: recorded.value as T, replayed: false, inherited: true };
    if (this.replaying)
      await this.diverged({
        ...call,
        reason: "not_recorded",
        replayed: { fingerprint: options.fingerprint, ...differing(options.prompt) },
      });
    const value = await produce();
    if (options.keep && !options.keep(value)) return { value, replayed: false };
    this.record(round, kind, callId, value, options.fingerprint);
    if (!options.defer) await this.flush();
    return { value, replayed: false };
  }

  /** Whether this scope's records were inherited by a replay: every call must be answered from them. */
  private get replaying(): boolean {
    for (const record of this.records.values()) if (record.inherited === "replay") return true;
    return false;
  }

  /** Records where the replay parted from its journal, and stops it. */
  private async diverged(divergence: Divergence): Promise<never> {
    await recordDivergence(this.journal, this.runId, divergence);
    throw new ReplayDivergedError(divergence);
  }

  /** Records a value now (without producing it), written with the next flush. */
  record(round: number, kind: JournalKind, callId: string, value: unknown, fingerprint?: string): void {
    const record: JournalRecord = { ...this.call(round, kind, callId), value, ...(fingerprint ? { fingerprint } : {}) };
    this.records.set(callKey(record), record);
    this.unwritten.push(record);
  }

  get(round: number, kind: JournalKind, callId = ""): unknown {
    return this.records.get(callKey(this.call(round, kind, callId)))?.value;
  }

  private call(round: number, kind: JournalKind, callId: string): JournalCall {
    return { scope: this.scope, round, kind, ...(callId ? { callId } : {}) };
  }

  /**
   * Writes the deferred records, with `also` (task records, a step context) in the same commit. A flush starts after the one
   * before it has ended, so a round's records are never stored without the rounds before them (a
   * replay after a crash sees a prefix of the rounds). A flush whose write failed puts its records
   * back: the next flush writes them.
   */
  flush(also: Omit<JournalCommit, "records"> = {}): Promise<void> {
    const write = this.writes.last
      .catch(() => undefined)
      .then(async () => {
        const records = this.unwritten.splice(0);
        if (records.length === 0 && !also.tasks?.length && !also.step) return;
        try {
          await this.journal.commit(this.runId, { records, ...also });
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
    for (const record of this.records.values())
      if (record.scope === this.scope && record.round === round && record.kind === kind) return true;
    return false;
  }

  /** What the recorded model calls cost: every model response this scope holds, and the tool calls they asked for. */
  usage(): { promptTokens: number; completionTokens: number; llmCalls: number; toolCalls: number; fallbackCalls?: number } {
    const total: ReturnType<ScopeJournal["usage"]> = { promptTokens: 0, completionTokens: 0, llmCalls: 0, toolCalls: 0 };
    for (const { kind, value, inherited } of this.records.values()) {
      if (kind !== "llm" || inherited) continue; // an inherited call was paid for by the run it came from
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

  /** The tool calls of this scope a person declined, in the order of their rounds. */
  undoneCalls(): UndoneCall[] {
    return [...this.records.values()]
      .filter((record) => record.scope === this.scope && record.kind === "tool" && (record.value as { undone?: unknown })?.undone)
      .sort((a, b) => a.round - b.round)
      .map((record) => (record.value as { undone: UndoneCall }).undone);
  }

  has(round: number, kind: JournalKind, callId = ""): boolean {
    return this.records.has(callKey(this.call(round, kind, callId)));
  }
}

/** What a replay's divergence shows of the new request: its first message that differs from the recorded one. */
const differing = (prompt: readonly ChatMessage[] | undefined, recordedFingerprint?: string): Partial<Divergence["replayed"]> =>
  prompt ? { message: firstDifferentMessage(recordedFingerprint, prompt) } : {};
