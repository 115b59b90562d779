import { createHash } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import { priorResultsOf } from "../agent/executor.js";
import { interruptIdFor, openInterrupt } from "../agent/interrupts.js";
import { type LoopPorts, type RunScope, runAgentLoop } from "../agent/loop.js";
import { quietly } from "../agent/overlap.js";
import { fileLines, type PromptContext, plannerPrompt, toolLines } from "../agent/prompts.js";
import { portsForAgent } from "../agent/savedAgent.js";
import { ScopeJournal } from "../agent/scopeJournal.js";
import {
  eventsUsed,
  HISTORY_RESERVE,
  handBackEvents,
  handBacksEvents,
  historyVerdict,
  iterationEvents,
  newExecutionHoldsHandBacks,
  STEP_AND_CHOICE_EVENTS,
  WAIT_EVENTS,
} from "../contracts/historyBudget.js";
import { formatPlan, type Plan } from "../contracts/plan.js";
import type { RunRecord } from "../contracts/run.js";
import type { PlanInput, PlanOutput, TaskResult } from "../contracts/steps.js";
import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import { NotFoundError, UnprocessableError } from "../errors.js";
import { budgetsOf, sessionHistory } from "../memory/session.js";
import { clip, shareBudget } from "../memory/share.js";
import type { StepPorts } from "../ports/index.js";
import { carrySessionFiles } from "../run/sessionFiles.js";
import { askUser } from "../tools/askUser.js";
import { type PlanBoard, planningTool } from "../tools/planning.js";
import { ToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";

/** The planner: the loop's ports, the step's task records, the session's earlier turns, and the executions to measure the history. */
export type PlanPorts = StepPorts<keyof LoopPorts | "tasks" | "sessions" | "tools" | "executions">;

const MAX_TASKS_PER_STEP = 40; // an inline Map runs at most 40 iterations at once

const RAISE_BUDGET = "raise the budget (at most 25,000)";

/**
 * "Plan": record the last step's results, revise the plan, ask for approval or hand the next tasks
 * to the Map — in this execution if its history has room for them, else in the run's next one.
 * Tasks the last Map deferred (its history could not hold their hand-backs) go on in the next
 * execution first: the step is not finished, so the planner has nothing to judge yet.
 */
export async function plan(input: PlanInput, ports: PlanPorts): Promise<PlanOutput> {
  const budget = ports.settings.budgets.historyEvents;
  const deferred = input.taskResults?.filter((result) => result.deferred) ?? [];
  if (deferred.length > 0) return continueStep(input, deferred, budget);
  const output = await planTurn({ runId: input.runId, ports, deadline: ports.deadline }, input);
  // Where this execution's history stands as Plan starts: the last Plan's estimate (it counted its
  // whole iteration, or its wait for a person), and the hand-backs of the Map just run.
  const handBacks = input.taskResults?.reduce((sum, result) => sum + (result.handBacks ?? 0), 0) ?? 0;
  const estimate = input.history === undefined ? undefined : input.history + handBacksEvents(handBacks);
  if (output.next !== "execute") {
    const spent = STEP_AND_CHOICE_EVENTS + (output.next === "approve" ? WAIT_EVENTS : 0);
    return estimate === undefined ? output : { ...output, history: estimate + spent };
  }
  const tasks = output.tasks.length;
  const used = await eventsUsed(
    estimate,
    budget,
    (events) => historyVerdict(events, tasks, budget) === "fits",
    async () => {
      const run = await ports.runs.get(input.runId);
      return run ? ports.executions.historyLength(run.executionArn) : 0;
    },
  );
  const verdict = historyVerdict(used, tasks, budget);
  if (verdict === "fits") return { ...output, history: used + iterationEvents(tasks) };
  if (verdict === "continue") return { ...output, next: "continue" };
  throw new UnprocessableError(
    `A plan step of ${output.tasks.length} tasks needs about ${iterationEvents(output.tasks.length) + HISTORY_RESERVE} Step Functions history events, more than one execution may use (HISTORY_EVENT_BUDGET = ${budget}): ${RAISE_BUDGET}.`,
    "history_budget",
  );
}

/** The deferred tasks of the step, in the run's next execution (same iteration, same step). */
function continueStep(input: PlanInput, deferred: TaskResult[], budget: number): PlanOutput {
  if (!newExecutionHoldsHandBacks(deferred.length, budget)) {
    throw new UnprocessableError(
      `${deferred.length} tasks waiting at once need about ${handBackEvents(deferred.length)} Step Functions history events, more than one execution may use (HISTORY_EVENT_BUDGET = ${budget}): ${RAISE_BUDGET}.`,
      "history_budget",
    );
  }
  const stepIndex = stepRun(input);
  if (stepIndex === undefined) throw new Error(`run ${input.runId}: deferred tasks came back without the plan step they belong to`);
  return {
    runId: input.runId,
    mode: "plan_solve",
    iteration: input.iteration ?? 0,
    revision: input.revision ?? 0,
    next: "continue",
    stepIndex,
    tasks: deferred.map(({ task }) => task),
  };
}

/**
 * The planner's turn: record the last step's results, let the planner revise the plan, have a
 * person approve it if the run asks for that, then choose the next step's tasks for the Map, or
 * hand over to the summarizer.
 */
async function planTurn(run: RunScope<PlanPorts>, input: PlanInput): Promise<PlanOutput> {
  const { ports } = run;
  const returningFromMap = input.taskResults !== undefined;
  const iteration = returningFromMap ? (input.iteration ?? 0) + 1 : (input.iteration ?? 0);
  const deciding = input.next === "approve" && input.interruptId && !returningFromMap;
  // One round trip before the model: the run, this iteration's planner journal (every revision),
  // the last step's results, a person's decision on the plan, and the run's files (for the prompt).
  const ranStep = returningFromMap ? stepRun(input) : undefined;
  const fromStep = ranStep !== undefined;
  const [record, journals, results, decision, listed] = await Promise.all([
    ports.runs.get(run.runId),
    ScopeJournal.load(ports.journal, run.runId, `plan#${iteration}`),
    fromStep ? ports.tasks.list(run.runId, iteration - 1) : undefined,
    deciding && input.interruptId ? ports.interrupts.get(run.runId, input.interruptId) : undefined,
    ports.files.list(run.runId),
  ]);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  // The session's earlier files, before the first plan (a routed run has them from the router's step).
  const first = iteration === 0 && !deciding && journals.size === 0 && record.requestedMode !== "auto";
  const files = first && (await carrySessionFiles(ports, record)).length ? await ports.files.list(run.runId) : listed;
  // A saved agent's planner offers its executors only its tools, with its own model settings.
  const asAgent = { ...run, ports: portsForAgent(ports, record.agent) };
  // The planner's prompt also names what its executors can do (the tenant's catalog, cached).
  // What only the next step's context needs is read while the model thinks (asked for once
  // the model call is on its way): the last step's context (it holds the results before that step;
  // with its own results, the next step's).
  const team = quietly(asAgent.ports.tools.registryFor(record.tenantId, { runId: run.runId }));
  const stepContextReads = quietly(nextTurn().then(() => (fromStep ? ports.tasks.step(run.runId, iteration - 1) : undefined)));
  let revision = returningFromMap ? 0 : (input.revision ?? 0);
  const board: PlanBoard = { plan: record.plan };
  let approvedPlan = record.approvedPlan;

  // Back from "Wait for plan approval": approved → run it; rejected → the planner revises. Back
  // from the planner's own question (ask_user before it planned): the planner goes on, its journal
  // replayed up to the question, with the person's answer.
  let feedback = "";
  let needsPlanner = true;
  if (deciding && decision?.kind !== "ask_user") {
    if (decision?.status === "resolved" && decision.resolution?.decision === "approve" && board.plan) {
      approvedPlan = fingerprint(board.plan);
      needsPlanner = false;
    } else {
      revision += 1;
      const reason = decision?.resolution?.message ?? (decision?.status === "pending" ? "" : `the approval ${decision?.status}`);
      feedback = `The user rejected this plan${reason ? `: ${reason}` : ""}. Revise it with the planning tool.`;
    }
  }

  // The step just run stays in progress while the planner judges its results against its
  // done_when (planning "check"); without a verdict it is marked by its tasks' outcomes.
  let resultsText = "";
  let executed: { title: string; index: number; failed: number } | undefined;
  const step = ranStep === undefined ? undefined : board.plan?.steps[ranStep];
  if (results && board.plan && step && ranStep !== undefined) {
    const index = ranStep;
    executed = { title: step.title, index, failed: results.filter((t) => t.status !== "succeeded").length };
    board.plan = {
      ...board.plan,
      steps: board.plan.steps.map((s, i) => (i === index ? { ...s, status: "in_progress" as const, verdict: undefined } : s)),
    };
    // Whole when the results fit half the prompt budget together: the planner judges the step by them.
    const texts = shareBudget(
      results.map((t) => t.result ?? ""),
      ports.settings.budgets.contextTokens * 2,
    );
    resultsText = [
      `Results of step ${index + 1} (${step.title}):`,
      ...results.map((t, i) => `- [${t.taskId}] ${t.title}: ${t.status === "succeeded" ? "" : "FAILED: "}${texts[i]}`),
      "",
      `Check step ${index + 1} against its done_when (${step.doneWhen ?? "its tasks are done"}): call planning {"command": "check", "step_index": ${index}, "met": true or false, "reason": "…"}. If it is not met, revise the step's tasks with update: it runs again.`,
    ].join("\n");
  }

  const maxIterations = budgetsOf(ports, record).maxPlanIterations;
  const budgetLeft = iteration < maxIterations;
  const stopReason =
    !budgetLeft && !board.plan?.finished
      ? `The plan iteration budget (${maxIterations}) was reached before the plan was finished; the answer covers what was done.`
      : undefined;
  const prompt: PromptContext = { tools: toolLines(await team), files: fileLines(files), instructions: record.instructions };
  const turn =
    budgetLeft && needsPlanner
      ? await revisePlan(asAgent, record, board, {
          iteration,
          revision,
          resultsText,
          feedback,
          prompt,
          judging: executed?.index,
          journal: journals.scoped(revision ? `plan#${iteration}#r${revision}` : `plan#${iteration}`),
        })
      : undefined;

  const output = { runId: run.runId, mode: "plan_solve" as const, iteration, revision };
  if (turn?.kind === "interrupted") {
    // The planner asked a person before it planned: the run waits; the answer brings it back here.
    await Promise.all([ports.runs.update(run.runId, {}, undefined, turn.usage), turn.journal.flush(), turn.events]);
    return { ...output, next: "approve", interruptId: turn.interruptId };
  }
  if (executed && board.plan) board.plan = judged(board.plan, executed);
  const plan = board.plan;
  if (!plan) throw new Error(`Run ${run.runId}: the planner's turn left no plan.`);
  if (budgetLeft && !plan.finished && record.approval?.plan && fingerprint(plan) !== approvedPlan) {
    const interruptId = interruptIdFor(run.runId, "plan", iteration, revision);
    await Promise.all([
      ports.runs.update(run.runId, { plan, stopReason }, undefined, turn?.usage),
      ports.events.append(run.runId, [{ type: "plan.updated", data: { plan } }]),
      turn?.journal.flush(),
      turn?.events,
    ]);
    await openInterrupt(ports, { interruptId, runId: run.runId, kind: "plan_approval", summary: formatPlan(plan), arguments: { plan } });
    return { ...output, next: "approve", interruptId };
  }

  const lastStep = await stepContextReads;
  const stepIndex =
    budgetLeft && !plan.finished ? plan.steps.findIndex((s) => s.status === "not_started" || s.status === "in_progress") : -1;
  const nextPlan = stepIndex >= 0 ? markStep(plan, stepIndex, "in_progress") : plan;
  const tasks = (nextPlan.steps[stepIndex]?.tasks ?? []).slice(0, MAX_TASKS_PER_STEP).map((text, i) => ({
    taskId: taskIdFor(iteration, i),
    title: text.slice(0, 300),
    text,
  }));
  // The next step's context and task records go with the planner's last journal entries (one
  // commit); the run, its event and that commit are written at the same time.
  // Earlier results go to the executors whole within half their prompt budget (about 4 characters
  // a token); what does not fit is a run file they are told how to read.
  const prior =
    stepIndex >= 0 ? priorResultsOf(results ?? [], iteration, lastStep?.priorResults, ports.settings.budgets.contextTokens * 2) : undefined;
  const nextStep = prior
    ? {
        step: {
          iteration,
          stepIndex,
          tenantId: record.tenantId,
          request: record.input,
          plan: nextPlan,
          priorResults: prior.lines,
          approvalTools: record.approval?.tools,
          instructions: record.instructions,
          agent: record.agent,
          maxRounds: budgetsOf(ports, record).maxRounds,
          tasks,
          files: prompt.files,
        },
        tasks: tasks.map((t) => ({ iteration, stepIndex, taskId: t.taskId, title: t.title, text: t.text, status: "pending" as const })),
      }
    : {};
  await Promise.all([
    ...(prior?.files ?? []).map((file) =>
      ports.files.put(run.runId, file.name, file.text, { description: `The whole result of the task: ${file.title.slice(0, 200)}` }),
    ),
    ports.runs.update(run.runId, { plan: nextPlan, approvedPlan, stopReason }, undefined, turn?.usage),
    ports.events.append(run.runId, [{ type: "plan.updated", data: { plan: nextPlan } }]),
    (turn?.journal ?? journals).flush(nextStep),
    turn?.events,
  ]);
  if (stepIndex < 0) return { ...output, next: "summarize" };
  return { ...output, next: "execute", stepIndex, tasks: tasks.map(({ taskId, title }) => ({ taskId, title })) };
}

/** The plan step the Map just ran, from "Plan"'s input (states of earlier versions say -1 for none). */
function stepRun(input: PlanInput): number | undefined {
  return input.stepIndex !== undefined && input.stepIndex >= 0 ? input.stepIndex : undefined;
}

/**
 * The step just run, after the planner's turn: met → completed; not met → it runs again (with the
 * tasks the planner revised); not judged → completed when every task succeeded, else blocked.
 */
function judged(plan: Plan, executed: { title: string; index: number; failed: number }): Plan {
  const at = plan.steps.findIndex((s) => s.title === executed.title);
  const index = at >= 0 ? at : executed.index;
  const step = plan.steps[index];
  if (step?.status !== "in_progress") return plan; // the planner marked it itself
  if (step.verdict) return markStep(plan, index, step.verdict.met ? "completed" : "not_started");
  return markStep(
    plan,
    index,
    executed.failed ? "blocked" : "completed",
    executed.failed ? `${executed.failed} task(s) failed` : undefined,
  );
}

/**
 * The planner model's turn with the planning tool (and, before there is a plan, ask_user: it may
 * ask for what it cannot plan without); a model that does not plan still gets a one-step plan.
 */
async function revisePlan(
  run: RunScope<PlanPorts>,
  record: RunRecord,
  board: PlanBoard,
  context: {
    iteration: number;
    revision: number;
    resultsText: string;
    feedback: string;
    prompt: PromptContext;
    journal: ScopeJournal;
    judging?: number;
  },
) {
  // Steps still to run, besides the one whose results are being judged.
  const remaining =
    board.plan?.steps.filter((s, i) => (s.status === "not_started" || s.status === "in_progress") && i !== context.judging).length ?? 1;
  const userMessage = board.plan
    ? [
        `Request: ${record.input}`,
        "",
        "Current plan:",
        formatPlan(board.plan),
        "",
        context.resultsText,
        context.feedback,
        "",
        remaining === 0
          ? "All steps are completed once this last step's check is met: then call finish if the request is answered, or update the plan."
          : "Revise the plan if the results call for it; otherwise reply briefly and the next step runs.",
      ].join("\n")
    : `Request: ${record.input}`;
  const history = await sessionHistory(run.ports, record);
  const outcome = await runAgentLoop(run, {
    scope: context.journal.scope,
    role: "planner",
    system: () => plannerPrompt(context.prompt),
    conversation: [...history, { role: "user", content: userMessage }],
    // The same tools on every call (a provider's prompt cache keys on them); ask_user only asks before there is a plan.
    tools: new ToolRegistry([planningTool(board), board.plan ? askUserTooLate : askUser]),
    maxRounds: 5,
    journal: context.journal,
    runActive: !TERMINAL_STATUSES.has(record.status),
    allowEmptyAnswer: true,
    // A plan made (or finished) is the turn's result: the next step starts without another model call.
    endsTurn: (calls, outcomes) => calls.every((c) => c.name === "planning") && outcomes.every((o) => o.ok),
  });
  if (!board.plan) {
    board.plan = {
      title: record.input.slice(0, 80),
      steps: [{ title: "Answer the request", tasks: [record.input], status: "not_started" }],
      finished: false,
    };
    if (outcome.kind === "answer" && outcome.text) board.plan.steps[0].notes = clip(outcome.text, 1000);
  }
  return outcome;
}

/** ask_user as the planner sees it once a plan exists: the same tool to the model, an error when called. */
const askUserTooLate = defineTool({
  ...askUser,
  asksUser: false,
  pure: true,
  async run() {
    return "Error: ask_user is for a requirement missing before the plan exists. Work with the plan and the results you have, or revise the plan.";
  },
});

/** Unique within the run: the step's number (its iteration, from 1) and the task's ("s2.t1"). */
const taskIdFor = (iteration: number, index: number) => `s${iteration + 1}.t${index + 1}`;

/** What a person approved: the steps and their tasks (statuses change as the run goes). */
function fingerprint(plan: Plan): string {
  return createHash("sha256")
    .update(JSON.stringify(plan.steps.map((s) => [s.title, s.tasks])))
    .digest("hex");
}

function markStep(plan: Plan, index: number, status: Plan["steps"][number]["status"], notes?: string): Plan {
  return { ...plan, steps: plan.steps.map((s, i) => (i === index ? { ...s, status, notes: notes ?? s.notes } : s)) };
}
