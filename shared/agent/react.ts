import type { AgentTurnOutput, RunState } from "../contracts/steps.js";
import { NotFoundError } from "../errors.js";
import { runAgentLoop, type RunScope } from "./loop.js";
import { reactPrompt } from "./prompts.js";
import { budgetsOf, sessionHistory } from "../memory/session.js";

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
  if (outcome.kind === "paused") return { runId: run.runId, mode: "react", done: false, turn };
  if (outcome.kind === "ended") return { runId: run.runId, mode: "react", done: true, turn };
  if (outcome.kind === "interrupted") return { runId: run.runId, mode: "react", done: false, turn, interruptId: outcome.interruptId };
  const files = (await services.files.list(run.runId)).map((f) => f.name);
  await services.runs.update(run.runId, { result: outcome.text, files });
  return { runId: run.runId, mode: "react", done: true, turn };
}
