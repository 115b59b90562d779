import type { AgentTurnOutput, RunState } from "../contracts/steps.js";
import { AgentError, NotFoundError } from "../errors.js";
import { fitText } from "./largeText.js";
import { EMPTY_ANSWER_ERROR, runAgentLoop, type RunScope } from "./loop.js";
import { reactPrompt } from "./prompts.js";
import { budgetsOf, rememberTurn, sessionHistory } from "../memory/session.js";

/**
 * One "Agent turn" of a ReAct run: think/act rounds until the agent answers, its round budget is
 * spent, or the Lambda's time is nearly up (then the next turn resumes from the journal).
 */
export async function agentTurn(run: RunScope, input: RunState & { turn?: number }): Promise<AgentTurnOutput> {
  const { services } = run;
  const record = await services.runs.get(run.runId);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const [history, tools] = await Promise.all([sessionHistory(services, record), services.tools.registryFor(record.tenantId, "react", { runId: record.runId })]);
  const outcome = await runAgentLoop(run, {
    scope: "react",
    role: "react",
    system: async () => reactPrompt({ files: (await services.files.list(run.runId)).map((f) => f.name) }),
    conversation: [...history, { role: "user", content: record.input }],
    tools,
    maxRounds: budgetsOf(services, record).maxRounds,
    toolConcurrency: services.config.TOOL_CONCURRENCY,
    toolApproval: record.approval?.tools,
  });
  const turn = (input.turn ?? 0) + 1;
  const answered = outcome.kind === "answer" || outcome.kind === "budget";
  const result = answered ? await fitText(services.files, run.runId, "answer.md", outcome.text) : undefined;
  const files = answered ? (await services.files.list(run.runId)).map((f) => f.name) : undefined;
  // The turn's records, events and usage together; with the answer when there is one.
  await Promise.all([
    outcome.journal.flush(),
    outcome.events,
    services.runs.update(run.runId, answered ? { result, files } : {}, undefined, outcome.usage),
    // The answer joins the session now ("Finalize" only ends the run).
    answered ? rememberTurn(services, { ...record, result }) : undefined,
  ]);
  if (outcome.kind === "empty") throw new AgentError(EMPTY_ANSWER_ERROR, "empty_answer");
  if (outcome.kind === "paused") return { runId: run.runId, mode: "react", done: false, turn };
  if (outcome.kind === "ended") return { runId: run.runId, mode: "react", done: true, turn };
  if (outcome.kind === "interrupted") return { runId: run.runId, mode: "react", done: false, turn, interruptId: outcome.interruptId };
  return { runId: run.runId, mode: "react", done: true, turn };
}
