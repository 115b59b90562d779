import { setImmediate as nextTurn } from "node:timers/promises";
import { quietly } from "../agent/backgroundWrites.js";
import { priorResultsOf } from "../agent/executor.js";
import { interruptIdFor, openInterrupt } from "../agent/interrupts.js";
import { type LoopOutcome, type LoopPorts, type RunScope, runAgentLoop } from "../agent/loop.js";
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
import { clip } from "../memory/share.js";
import type { FileLine } from "../ports/files.js";
import type { StepPorts } from "../ports/index.js";
import { carrySessionFiles } from "../run/sessionFiles.js";
import { askUser } from "../tools/askUser.js";
import { type PlanBoard, planningTool } from "../tools/planning.js";
import { ToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { iterationBudget, judged, needsPlanApproval, nextStepOf, planApproval, stepToJudge } from "./planDecisions.js";

/** The planner: the loop's ports, the step's task records, the session's earlier turns, and the executions to measure the history. */
export type PlanPorts = StepPorts<keyof LoopPorts | "tasks" | "sessions" | "tools" | "executions">;

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
  if (verdict === "new_execution") return { ...output, next: "new_execution" };
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
    next: "new_execution",
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
  const at = turnPosition(input);
  const reads = await readTurn(run, at);
  const { record } = reads;
  const approval = at.decided ? planApproval(reads.decision, record.plan) : undefined;
  const revision = at.revision + (approval && "feedback" in approval ? 1 : 0);
  const judging = stepToJudge(record.plan, at.ranStep, reads.results, ports.settings.budgets.contextTokens);
  const board: PlanBoard = { plan: judging?.plan ?? record.plan };
  // At a token or cost budget (an executor delivered at it): no more planning, the summary answers.
  const budget = record.budget?.exhausted
    ? { left: false, stopReason: record.budget.exhausted }
    : iterationBudget(board.plan, at.iteration, budgetsOf(ports, record).maxPlanIterations);
  const prompt: PromptContext = { tools: toolLines(await reads.team), files: fileLines(reads.files), instructions: record.instructions };
  const turn =
    budget.left && !(approval && "approvedPlan" in approval)
      ? await revisePlan(reads.asAgent, record, board, {
          iteration: at.iteration,
          revision,
          resultsText: judging?.resultsText ?? "",
          feedback: approval && "feedback" in approval ? approval.feedback : "",
          prompt,
          judging: judging?.executed.index,
          journal: reads.journals.scoped(revision ? `plan#${at.iteration}#r${revision}` : `plan#${at.iteration}`),
        })
      : undefined;

  const output = { runId: run.runId, mode: "plan_solve" as const, iteration: at.iteration, revision };
  if (turn?.kind === "interrupted") return writeQuestion(run, output, turn);
  const plan = judging && board.plan ? judged(board.plan, judging.executed) : board.plan;
  if (!plan) throw new Error(`Run ${run.runId}: the planner's turn left no plan.`);
  // The planner itself stopped at a budget: hand over to the summary, as when no iteration is left.
  const room = turn?.kind === "budget" && turn.exhausted ? { left: false, stopReason: turn.exhausted } : budget;
  const approvedPlan = approval && "approvedPlan" in approval ? approval.approvedPlan : record.approvedPlan;
  if (needsPlanApproval(plan, record.approval?.plan, approvedPlan, room.left))
    return askPlanApproval(run, output, plan, room.stopReason, turn);
  const next = nextStepOf(plan, at.iteration, room.left);
  await handOverStep(run, reads, next, { iteration: at.iteration, approvedPlan, stopReason: room.stopReason, files: prompt.files, turn });
  if (next.stepIndex < 0) return { ...output, next: "summarize" };
  return { ...output, next: "execute", stepIndex: next.stepIndex, tasks: next.tasks.map(({ taskId, title }) => ({ taskId, title })) };
}

/** What every outcome of the planner's turn says: the run, and where the plan stands. */
type PlanProgress = { runId: string; mode: "plan_solve"; iteration: number; revision: number };

/** Where the planner's turn stands, from "Plan"'s input alone. */
interface TurnPosition {
  /** After the Map ran a step, the next iteration (this turn judges that step). */
  iteration: number;
  /** Plans a person rejected in this iteration so far. */
  revision: number;
  /** The plan step the Map ran, when it ran one. */
  ranStep?: number;
  /** Back from "Wait for plan approval" (or the planner's own question): the interrupt a person decided. */
  decided?: string;
}

function turnPosition(input: PlanInput): TurnPosition {
  const returningFromMap = input.taskResults !== undefined;
  return {
    iteration: returningFromMap ? (input.iteration ?? 0) + 1 : (input.iteration ?? 0),
    revision: returningFromMap ? 0 : (input.revision ?? 0),
    ranStep: returningFromMap ? stepRun(input) : undefined,
    decided: input.next === "approve" && !returningFromMap ? input.interruptId || undefined : undefined,
  };
}

/**
 * The turn's reads. One round trip before the model: the run, this iteration's planner journal
 * (every revision), the last step's results, a person's decision on the plan, and the run's files
 * (with the session's earlier files before the first plan). Started here, awaited later: the
 * catalog the planner's prompt names (what its executors can do), and, once the model call is on
 * its way, the last step's context (it holds the results before that step).
 */
async function readTurn(run: RunScope<PlanPorts>, at: TurnPosition) {
  const { ports } = run;
  const fromStep = at.ranStep !== undefined;
  const [record, journals, results, decision, listed] = await Promise.all([
    ports.runs.get(run.runId),
    ScopeJournal.load(ports.journal, run.runId, `plan#${at.iteration}`),
    fromStep ? ports.tasks.list(run.runId, at.iteration - 1) : undefined,
    at.decided ? ports.interrupts.get(run.runId, at.decided) : undefined,
    ports.files.list(run.runId),
  ]);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  // The session's earlier files, before the first plan (a routed run has them from the router's step).
  const first = at.iteration === 0 && !at.decided && journals.size === 0 && record.requestedMode !== "auto";
  const files = first && (await carrySessionFiles(ports, record)).length ? await ports.files.list(run.runId) : listed;
  // A saved agent's planner offers its executors only its tools, with its own model settings.
  const asAgent = { ...run, ports: portsForAgent(ports, record.agent) };
  const team = quietly(asAgent.ports.tools.registryFor(record.tenantId, { runId: run.runId }));
  const lastStep = quietly(nextTurn().then(() => (fromStep ? ports.tasks.step(run.runId, at.iteration - 1) : undefined)));
  return { record, journals, results, decision, files, asAgent, team, lastStep };
}

/** The planner asked a person before it planned: the run waits; the answer brings it back here. */
async function writeQuestion(
  run: RunScope<PlanPorts>,
  output: PlanProgress,
  turn: Extract<LoopOutcome, { kind: "interrupted" }>,
): Promise<PlanOutput> {
  await Promise.all([run.ports.runs.update(run.runId, {}, undefined, turn.usage), turn.journal.flush(), turn.events]);
  return { ...output, next: "approve", interruptId: turn.interruptId };
}

/** The plan waits for a person's approval: stored and announced, then the interrupt opened. */
async function askPlanApproval(
  run: RunScope<PlanPorts>,
  output: PlanProgress,
  plan: Plan,
  stopReason: string | undefined,
  turn: LoopOutcome | undefined,
): Promise<PlanOutput> {
  const { ports } = run;
  const interruptId = interruptIdFor(run.runId, "plan", output.iteration, output.revision);
  await Promise.all([
    ports.runs.update(run.runId, { plan, stopReason }, undefined, turn?.usage),
    ports.events.append(run.runId, [{ type: "plan.updated", data: { plan } }]),
    turn?.journal.flush(),
    turn?.events,
  ]);
  await openInterrupt(ports, { interruptId, runId: run.runId, kind: "plan_approval", summary: formatPlan(plan), arguments: { plan } });
  return { ...output, next: "approve", interruptId };
}

/**
 * The turn's writes: the plan (with the next step in progress), its event, and the planner's last
 * journal entries, in one commit with the next step's context and task records; all at the same time.
 * Earlier results go to the executors whole within half their prompt budget (about 4 characters
 * a token); what does not fit is a run file they are told how to read.
 */
async function handOverStep(
  run: RunScope<PlanPorts>,
  reads: Awaited<ReturnType<typeof readTurn>>,
  next: ReturnType<typeof nextStepOf>,
  turnEnd: { iteration: number; approvedPlan?: string; stopReason?: string; files?: FileLine[]; turn?: LoopOutcome },
): Promise<void> {
  const { ports } = run;
  const { record } = reads;
  const { iteration } = turnEnd;
  const { stepIndex, tasks } = next;
  const lastStep = await reads.lastStep;
  const prior =
    stepIndex >= 0
      ? priorResultsOf(reads.results ?? [], iteration, lastStep?.priorResults, ports.settings.budgets.contextTokens * 2)
      : undefined;
  const nextStep = prior
    ? {
        step: {
          iteration,
          stepIndex,
          tenantId: record.tenantId,
          request: record.input,
          plan: next.plan,
          priorResults: prior.lines,
          approvalTools: record.approval?.tools,
          toolFailures: record.toolFailures,
          ...(record.maxSandboxes ? { maxSandboxes: record.maxSandboxes } : {}),
          instructions: record.instructions,
          agent: record.agent,
          ...(record.guardrails?.length ? { guardrails: record.guardrails } : {}),
          maxRounds: budgetsOf(ports, record).maxRounds,
          tasks,
          files: turnEnd.files,
        },
        tasks: tasks.map((t) => ({ iteration, stepIndex, taskId: t.taskId, title: t.title, text: t.text, status: "pending" as const })),
      }
    : {};
  await Promise.all([
    ...(prior?.files ?? []).map((file) =>
      ports.files.put(run.runId, file.name, file.text, { description: `The whole result of the task: ${file.title.slice(0, 200)}` }),
    ),
    ports.runs.update(
      run.runId,
      { plan: next.plan, approvedPlan: turnEnd.approvedPlan, stopReason: turnEnd.stopReason },
      undefined,
      turnEnd.turn?.usage,
    ),
    ports.events.append(run.runId, [{ type: "plan.updated", data: { plan: next.plan } }]),
    (turnEnd.turn?.journal ?? reads.journals).flush(nextStep),
    turnEnd.turn?.events,
  ]);
}

/** The plan step the Map just ran, from "Plan"'s input (states of earlier versions say -1 for none). */
function stepRun(input: PlanInput): number | undefined {
  return input.stepIndex !== undefined && input.stepIndex >= 0 ? input.stepIndex : undefined;
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
  // The planner's text streams to clients as every agent's does: through the run's output checks.
  const outcome = await runAgentLoop(
    {
      ...run,
      guardrails: record.guardrails,
      tenantId: record.tenantId,
      maxSandboxes: record.maxSandboxes,
      webhook: record.webhook ?? null,
      budget: record.budget ?? null,
    },
    {
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
    },
  );
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
