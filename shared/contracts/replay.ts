import * as z from "zod";
import { EventBody } from "./events.js";
import { RunRecord } from "./run.js";

/** `POST /v1/runs/{id}/replay`: optionally other operator instructions, to see whether a prompt change alters the run. */
export const ReplayRunRequest = z.strictObject({
  instructions: z.string().max(20_000).optional(),
});
export type ReplayRunRequest = z.infer<typeof ReplayRunRequest>;

/**
 * Where a fork starts: an agent's scope as the journal names it ("plan#1", a plan iteration;
 * "task#0#s1.t2", a task; "react"; "summary") and the round there. The fork reuses every call
 * before that round of that scope, and everything the run did before the scope started.
 */
export const ForkPoint = z.strictObject({
  scope: z.string().min(1).max(300),
  round: z.number().int().min(0).max(1_000),
});
export type ForkPoint = z.infer<typeof ForkPoint>;

/** A recorded tool result the fork sees changed (a tool's output, or a person's answer to a question). */
export const ToolResultEdit = z.strictObject({
  callId: z.string().min(1).max(300),
  output: z.string().max(200_000),
  ok: z.boolean().optional(),
});

/** A person's answer to a question (`ask_user`) asked before the fork point, changed. */
export const AnswerEdit = z.strictObject({
  callId: z.string().min(1).max(300),
  answer: z.string().min(1).max(20_000),
});

/**
 * A plan iteration's plan, changed (the fork is at a "plan#<i>" scope): its steps, each with the
 * tasks that run side by side, in the planning tool's limits.
 */
export const PlanEdit = z.strictObject({
  title: z.string().min(1).max(500).optional(),
  steps: z
    .array(
      z.strictObject({
        title: z.string().min(1).max(500),
        tasks: z.array(z.string().min(1).max(2_000)).min(1).max(40),
        done_when: z.string().max(1_000).optional(),
      }),
    )
    .min(1)
    .max(50),
});
export type PlanEdit = z.infer<typeof PlanEdit>;

export const ForkRunRequest = z.strictObject({
  at: ForkPoint,
  edits: z
    .strictObject({
      /** The user's request, changed: calls after the fork point read it. */
      input: z.string().min(1).optional(),
      /** Results of tool calls made before the fork point in its scope. */
      toolResults: z.array(ToolResultEdit).max(50).optional(),
      /** Answers to questions asked before the fork point in its scope. */
      answers: z.array(AnswerEdit).max(20).optional(),
      /** The plan the plan iteration made before the fork point. */
      plan: PlanEdit.optional(),
    })
    .optional(),
});
export type ForkRunRequest = z.infer<typeof ForkRunRequest>;

/** What a replay found, compared with the run it replays. */
export const ReplayComparison = z.object({
  runId: z.string(),
  replayOf: z.string(),
  status: z.enum(["running", "identical", "diverged", "failed"]),
  /** The first call the replayed code asked for that the journal lacks or recorded otherwise, both sides. */
  divergence: z.unknown().optional(),
  /** The first event that differs (events compared per agent, in order; streamed text joined), both sides. */
  event: z.object({ source: z.string(), index: z.number().int(), recorded: z.unknown(), replayed: z.unknown() }).optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** Events compared (of the recorded run), and model and tool calls the replay paid for (none). */
  eventsCompared: z.number().int().optional(),
});
export type ReplayComparison = z.infer<typeof ReplayComparison>;

/** One journal record as an export carries it (shared/ports/journal.ts). */
const ExportedJournalRecord = z.strictObject({
  scope: z.string().min(1).max(300),
  round: z.number().int().min(0),
  kind: z.enum(["llm", "tool", "intent", "memo", "attempt"]),
  callId: z.string().max(300).optional(),
  value: z.unknown(),
  fingerprint: z.string().max(200).optional(),
  inherited: z.enum(["replay", "fork"]).optional(),
});

/**
 * `GET /v1/runs/{id}/export`'s document, which `POST /v1/runs/import` takes back: the run record,
 * its journal and its events (bodies checked against the event schema as any append is).
 */
export const ExportedRun = z.strictObject({
  format: z.literal("stepwise.run/1"),
  // Its id is rewritten wherever the journal and events name it: a run id, nothing that could match elsewhere.
  run: RunRecord.extend({ runId: z.string().regex(/^run_[A-Za-z0-9_-]{6,76}$/, "a run id (run_…)") }),
  journal: z.array(ExportedJournalRecord).max(20_000),
  events: z.array(z.intersection(EventBody, z.object({ seq: z.number().int().min(1), at: z.string() }))).max(50_000),
});
export type ExportedRun = z.infer<typeof ExportedRun>;
