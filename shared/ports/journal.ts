import type { StepContext, TaskRecord } from "./tasks.js";

/**
 * A model response, a tool result, an intent (a write tool about to run), a memo, or an attempt (a
 * tool call's attempt that failed for a reason a person can fix, or left no outcome: agent/toolFailure.ts).
 */
export type JournalKind = "llm" | "tool" | "intent" | "memo" | "attempt";

/** Which call a record answers: the agent scope that made it, its round there, its kind and (a tool's) call id. */
export interface JournalCall {
  /** The agent instance: "react", "route", "summary", "plan#2" (its revision "plan#2#r1"), "task#0#s1.t1". */
  scope: string;
  round: number;
  kind: JournalKind;
  /** The tool call's id; absent where a round has one record of the kind (a model response, a memo). */
  callId?: string;
}

/**
 * Where a record came from when it was not made by this run: copied from the run it replays
 * (`replay`: every call is answered from it, none is made) or forks (`fork`: calls before the fork
 * point are answered from it, later ones are made).
 */
export type Inherited = "replay" | "fork";

/** One recorded call and what it returned. */
export interface JournalRecord extends JournalCall {
  value: unknown;
  /** The request a model call was made with, as a fingerprint (see agent/requestFingerprint.ts), to tell a replay whether it asks the same. */
  fingerprint?: string;
  /** Copied from another run (see Inherited): the call was made there, not here. */
  inherited?: Inherited;
}

/** What lands in one write: journal records and the task records and step context that go with them. */
export interface JournalCommit {
  records: JournalRecord[];
  tasks?: TaskRecord[];
  step?: StepContext;
}

/**
 * Whether `scope` is `outer` or a scope within it: a scope's inner scopes are named after it
 * ("plan#2" holds its revision "plan#2#r1", not "plan#20").
 */
export const withinScope = (scope: string, outer: string) => scope === outer || scope.startsWith(`${outer}#`);

/** Whether two records answer the same call (a later write of the call replaces the earlier). */
export const sameCall = (a: JournalCall, b: JournalCall) =>
  a.scope === b.scope && a.round === b.round && a.kind === b.kind && (a.callId ?? "") === (b.callId ?? "");

/**
 * The journal port: what each model and tool call returned, per agent scope and round, so a step
 * that runs again replays instead of repeating. Adapter: Journal (DynamoDB); fake:
 * shared/testing/memoryJournal.ts; contract: test/unit/shared/ports/journal.test.ts. The agent
 * reads a scope through agent/scopeJournal.ts.
 */
export interface RunJournal {
  /** The records of one scope and of the scopes within it (see withinScope), in no set order. */
  read(runId: string, scope: string): Promise<JournalRecord[]>;
  /** Writes the commit's records, task records and step context together. */
  commit(runId: string, commit: JournalCommit): Promise<void>;
  /** Every record of the run, of every scope, in no set order (to replay, fork or export it). */
  readRun(runId: string): Promise<JournalRecord[]>;
}
