import type { ScopeJournal } from "../agent/scopeJournal.js";
import type { StepContext, TaskRecord } from "./tasks.js";

/** A model response, a tool result, an intent (a write tool about to run), or a memo. */
export type JournalKind = "llm" | "tool" | "intent" | "memo";

/** One recorded call: its id within the run (see journalEntryId) and what it returned. */
export interface JournalEntry {
  id: string;
  value: unknown;
}

/** What lands in one write: journal entries and the task records and step context that go with them. */
export interface JournalCommit {
  entries: JournalEntry[];
  tasks?: TaskRecord[];
  step?: StepContext;
}

/**
 * An entry's id within its run: scope, round, kind and call (`task#0#s1.t1#0003#tool#call_1`).
 * A scope's ids all start with `<scope>#`, so a scope's entries include those of scopes under it
 * ("plan#2" holds "plan#2#r1"), and ids sort by round.
 */
export const journalEntryId = (scope: string, round: number, kind: JournalKind, callId = "") =>
  `${scopeEntryPrefix(scope)}${String(round).padStart(4, "0")}#${kind}${callId ? `#${callId}` : ""}`;

/** What the ids of a scope's entries, and of the scopes under it, start with. */
export const scopeEntryPrefix = (scope: string) => `${scope}#`;

/**
 * The journal port: what each model and tool call returned, per agent scope and round, so a step
 * that runs again replays instead of repeating. Adapter: Journal (DynamoDB); fake:
 * shared/testing/memoryJournal.ts; contract: test/unit/shared/ports/journal.test.ts.
 */
export interface RunJournal {
  /** One scope's entries (and those of scopes under it), ready to replay and record. */
  load(runId: string, scope: string): Promise<ScopeJournal>;
  /** Writes the commit's entries, task records and step context together. */
  commit(runId: string, commit: JournalCommit): Promise<void>;
}
