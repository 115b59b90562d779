import type { ExportedRun, ForkPoint } from "../../../shared/contracts/replay.js";
import { answerOf, type PlanStepEdit } from "../../display/forkEdits.js";

/**
 * Where "Fork from here" forks an ended run, read from its journal (`GET /v1/runs/{id}/export`):
 * the journal names each call's agent scope and round, which the run's events do not.
 */
type Journal = ExportedRun["journal"];
type ToolCall = { id: string; name: string; arguments: string };

const within = (scope: string, outer: string) => scope === outer || scope.startsWith(`${outer}#`);

/**
 * A tool result: the fork reuses the call and the reply that made it, and goes on live from the
 * next round, reading the edit. `taskId`: the task whose result it is (its event says), where call
 * ids of different agents could be alike.
 */
export function toolResultPoint(
  journal: Journal,
  callId: string,
  taskId?: string,
): { at: ForkPoint; output: string; ok: boolean; question: boolean } | undefined {
  const records = journal.filter((r) => r.kind === "tool" && r.callId === callId);
  const record =
    records.find((r) => (taskId ? r.scope.startsWith("task#") && r.scope.endsWith(`#${taskId}`) : !r.scope.startsWith("task#"))) ??
    records[0];
  if (!record) return undefined;
  const value = record.value as { output?: unknown; ok?: boolean };
  const call = callsIn(journal, record.scope).find((c) => c.id === callId);
  const question = call?.name === "ask_user";
  const output = String(value.output ?? "");
  return {
    at: { scope: record.scope, round: record.round + 1 },
    output: question ? answerOf(output) : output,
    ok: value.ok !== false,
    question,
  };
}

/** A task of plan iteration `iteration`: it runs again live from its first round, the tasks beside it reused. */
export function taskPoint(journal: Journal, iteration: number, taskId: string): ForkPoint | undefined {
  const scope = `task#${iteration}#${taskId}`;
  return journal.some((r) => within(r.scope, scope)) ? { scope, round: 0 } : undefined;
}

/**
 * A plan step: the plan as the planner last made it (a planning create or update) in the iteration
 * that handed the step out, or the latest before it; the fork replaces that plan from the next round.
 * `iteration` undefined: a step no task ran for, the last plan made.
 */
export function planPoint(
  journal: Journal,
  iteration: number | undefined,
): { at: ForkPoint; title?: string; steps: PlanStepEdit[] } | undefined {
  const made = journal
    .flatMap((record) => {
      const parts = /^plan#(\d+)(?:#r(\d+))?$/.exec(record.scope);
      if (!parts || record.kind !== "llm") return [];
      const planned = Number(parts[1]);
      if (iteration !== undefined && planned > iteration) return [];
      const plan = [...replyCalls(record.value)]
        .reverse()
        .find((c) => c.name === "planning" && /"command"\s*:\s*"(create|update)"/.test(c.arguments));
      return plan ? [{ record, planned, revision: Number(parts[2] ?? 0), plan }] : [];
    })
    .sort((a, b) => a.planned - b.planned || a.revision - b.revision || a.record.round - b.record.round)
    .at(-1);
  if (!made) return undefined;
  const args = JSON.parse(made.plan.arguments) as {
    title?: string;
    steps?: (string | { title: string; tasks?: string[]; done_when?: string })[];
  };
  // As the planning tool reads them: a step given as a string is its own one task; a step without tasks, its title.
  const steps = (args.steps ?? []).map((step) =>
    typeof step === "string"
      ? { title: step, tasks: [step] }
      : {
          title: step.title,
          tasks: step.tasks?.length ? step.tasks : [step.title],
          ...(step.done_when ? { done_when: step.done_when } : {}),
        },
  );
  return { at: { scope: `plan#${made.planned}`, round: made.record.round + 1 }, title: args.title, steps };
}

const replyCalls = (value: unknown): ToolCall[] => (value as { toolCalls?: ToolCall[] } | null)?.toolCalls ?? [];

/** The tool calls the model asked for within `scope`. */
const callsIn = (journal: Journal, scope: string) =>
  journal.filter((r) => r.kind === "llm" && within(r.scope, scope)).flatMap((r) => replyCalls(r.value));
