import { uploadedImageParts, withImages } from "../agent/images.js";
import { budgetStop, EMPTY_ANSWER_ERROR, type LoopPorts, type RunScope, runAgentLoop } from "../agent/loop.js";
import { fileLines, reactPrompt, toolLines } from "../agent/prompts.js";
import { portsForAgent } from "../agent/savedAgent.js";
import { agentTurnFits, eventsUsed, STEP_AND_CHOICE_EVENTS, WAIT_EVENTS } from "../contracts/historyBudget.js";
import type { AgentTurnInput, AgentTurnOutput, RunState } from "../contracts/steps.js";
import { AgentError, NotFoundError } from "../errors.js";
import { seesImages as roleSeesImages, toolCapFor } from "../llm/roleSettings.js";
import { fitText } from "../memory/largeText.js";
import { budgetsOf, rememberTurn, sessionHistory } from "../memory/session.js";
import type { StepPorts } from "../ports/index.js";
import { endToolScope } from "../ports/tools.js";
import { carrySessionFiles } from "../run/sessionFiles.js";
import { withToolSearch } from "../tools/toolSearch.js";

/** A ReAct turn: the loop's ports, the tenant's tools and the session, and the executions to measure the history. */
export type AgentTurnPorts = StepPorts<keyof LoopPorts | "tools" | "sessions" | "executions">;

/**
 * "Agent turn" (react): think/act rounds until the answer, the round budget, or the time is nearly
 * up. A turn that hands back (a person's decision, or its time was up) is followed by another: in
 * this execution if its history has room for it, else in the run's next one.
 */
export async function agentTurn(input: AgentTurnInput, ports: AgentTurnPorts): Promise<AgentTurnOutput> {
  const output = await reactTurn({ runId: input.runId, ports, deadline: ports.deadline }, input);
  if (output.done) return output;
  const budget = ports.settings.budgets.historyEvents;
  // This turn and "Agent finished?" are spent by the time the next turn could start.
  const estimate = input.history === undefined ? undefined : input.history + STEP_AND_CHOICE_EVENTS;
  const used = await eventsUsed(
    estimate,
    budget,
    (events) => agentTurnFits(events, budget),
    async () => {
      const run = await ports.runs.get(input.runId);
      return run ? ports.executions.historyLength(run.executionArn) : 0;
    },
  );
  if (agentTurnFits(used, budget)) return { ...output, history: used + (output.interruptId ? WAIT_EVENTS : 0) };
  // The next execution's turn finds a question still open and waits for it there.
  return { runId: output.runId, mode: output.mode, done: false, turn: output.turn, next: "new_execution" };
}

/**
 * One "Agent turn" of a ReAct run: think/act rounds until the agent answers, its round budget is
 * spent, or the Lambda's time is nearly up (then the next turn resumes from the journal).
 */
async function reactTurn(run: RunScope<AgentTurnPorts>, input: RunState & { turn?: number }): Promise<AgentTurnOutput> {
  const record = await run.ports.runs.get(run.runId);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const ports = portsForAgent(run.ports, record.agent);
  // The session's earlier files, before the first prompt lists the run's files (a routed run has them from the router's step).
  if (!input.turn && record.requestedMode !== "auto") await carrySessionFiles(ports, record);
  const seesImages = roleSeesImages("react", ports.settings.model.roles);
  const [history, registry, images] = await Promise.all([
    sessionHistory(ports, record),
    ports.tools.registryFor(record.tenantId, { runId: record.runId }),
    seesImages ? ports.files.list(run.runId).then((files) => uploadedImageParts(ports.files, run.runId, files, ports.settings.files)) : [],
  ]);
  const maxTools = toolCapFor("react", ports.settings.model.roles);
  const tools = withToolSearch(registry, maxTools);
  const catalog = toolLines(tools);
  const outcome = await runAgentLoop(
    {
      ...run,
      ports,
      guardrails: record.guardrails,
      tenantId: record.tenantId,
      maxSandboxes: record.maxSandboxes,
      webhook: record.webhook ?? null,
      budget: record.budget ?? null,
    },
    {
      scope: "react",
      role: "react",
      system: async () =>
        reactPrompt({ tools: catalog, files: fileLines(await ports.files.list(run.runId)), instructions: record.instructions, seesImages }),
      conversation: [...history, { role: "user", content: withImages(record.input, images) }],
      tools,
      maxTools,
      maxRounds: budgetsOf(ports, record).maxRounds,
      toolConcurrency: ports.settings.budgets.toolConcurrency,
      toolApproval: record.approval?.tools,
      toolFailures: record.toolFailures,
      ...(seesImages ? { toolImages: ports.settings.files } : {}),
    },
  );
  const turn = (input.turn ?? 0) + 1;
  const answered = outcome.kind === "answer" || outcome.kind === "budget";
  const result = answered ? await fitText(ports.files, run.runId, "answer.md", outcome.text) : undefined;
  const files = answered ? (await ports.files.list(run.runId)).map((f) => f.name) : undefined;
  // The answer is the agent's own summary of what it did and did not do; the run says why it stopped.
  const stopped = outcome.kind === "budget" ? { stopReason: outcome.exhausted ?? budgetStop(outcome.rounds) } : {};
  // The turn's records, events and usage together; with the answer when there is one.
  await Promise.all([
    outcome.journal.flush(),
    outcome.events,
    ports.runs.update(run.runId, answered ? { result, files, ...stopped } : {}, undefined, outcome.usage),
    // The answer joins the session now ("Finalize" only ends the run).
    answered ? rememberTurn(ports, { ...record, result }) : undefined,
  ]);
  // The agent is done: the tools' state for it (an interpreter session) ends with it.
  if (answered || outcome.kind === "ended" || outcome.kind === "empty") await endToolScope(tools, run.runId, "react");
  if (outcome.kind === "empty") throw new AgentError(EMPTY_ANSWER_ERROR, "empty_answer");
  if (outcome.kind === "paused") return { runId: run.runId, mode: "react", done: false, turn };
  if (outcome.kind === "ended") return { runId: run.runId, mode: "react", done: true, turn };
  if (outcome.kind === "interrupted") return { runId: run.runId, mode: "react", done: false, turn, interruptId: outcome.interruptId };
  return { runId: run.runId, mode: "react", done: true, turn };
}
