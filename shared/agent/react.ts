import type { AgentTurnOutput, RunState } from "../contracts/steps.js";
import { AgentError, NotFoundError } from "../errors.js";
import { fitText } from "./largeText.js";
import { EMPTY_ANSWER_ERROR, runAgentLoop, type LoopPorts, type RunScope } from "./loop.js";
import type { Ports } from "../ports/index.js";

/** A ReAct agent: the loop's ports, the tenant's tools, and the session. */
export type ReactPorts = LoopPorts & Pick<Ports, "tools" | "sessions">;
import { fileLines, reactPrompt, toolLines } from "./prompts.js";
import { budgetsOf, rememberTurn, sessionHistory } from "../memory/session.js";

/**
 * One "Agent turn" of a ReAct run: think/act rounds until the agent answers, its round budget is
 * spent, or the Lambda's time is nearly up (then the next turn resumes from the journal).
 */
export async function agentTurn(run: RunScope<ReactPorts>, input: RunState & { turn?: number }): Promise<AgentTurnOutput> {
  const { ports } = run;
  const record = await ports.runs.get(run.runId);
  if (!record) throw new NotFoundError(`run ${run.runId} not found`);
  const [history, tools] = await Promise.all([sessionHistory(ports, record), ports.tools.registryFor(record.tenantId, "react", { runId: record.runId })]);
  const catalog = toolLines(tools);
  const outcome = await runAgentLoop(run, {
    scope: "react",
    role: "react",
    system: async () => reactPrompt({ tools: catalog, files: fileLines(await ports.files.list(run.runId)) }),
    conversation: [...history, { role: "user", content: record.input }],
    tools,
    maxRounds: budgetsOf(ports, record).maxRounds,
    toolConcurrency: ports.config.TOOL_CONCURRENCY,
    toolApproval: record.approval?.tools,
  });
  const turn = (input.turn ?? 0) + 1;
  const answered = outcome.kind === "answer" || outcome.kind === "budget";
  const result = answered ? await fitText(ports.files, run.runId, "answer.md", outcome.text) : undefined;
  const files = answered ? (await ports.files.list(run.runId)).map((f) => f.name) : undefined;
  // The turn's records, events and usage together; with the answer when there is one.
  await Promise.all([
    outcome.journal.flush(),
    outcome.events,
    ports.runs.update(run.runId, answered ? { result, files } : {}, undefined, outcome.usage),
    // The answer joins the session now ("Finalize" only ends the run).
    answered ? rememberTurn(ports, { ...record, result }) : undefined,
  ]);
  if (outcome.kind === "empty") throw new AgentError(EMPTY_ANSWER_ERROR, "empty_answer");
  if (outcome.kind === "paused") return { runId: run.runId, mode: "react", done: false, turn };
  if (outcome.kind === "ended") return { runId: run.runId, mode: "react", done: true, turn };
  if (outcome.kind === "interrupted") return { runId: run.runId, mode: "react", done: false, turn, interruptId: outcome.interruptId };
  return { runId: run.runId, mode: "react", done: true, turn };
}
