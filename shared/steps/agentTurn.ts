import { agentTurn as reactTurn, type ReactPorts } from "../agent/react.js";
import type { AgentTurnInput, AgentTurnOutput } from "../contracts/steps.js";
import type { StepPorts } from "../ports/index.js";
import { agentTurnFits } from "../run/historyBudget.js";

export type AgentTurnPorts = StepPorts<keyof ReactPorts | "executions">;

/**
 * "Agent turn" (react): think/act rounds until the answer, the round budget, or the time is nearly
 * up. A turn that hands back (a person's decision, or its time was up) is followed by another: in
 * this execution if its history has room for it, else in the run's next one.
 */
export async function agentTurn(input: AgentTurnInput, ports: AgentTurnPorts): Promise<AgentTurnOutput> {
  const output = await reactTurn({ runId: input.runId, ports, deadline: ports.deadline }, input);
  if (output.done) return output;
  const run = await ports.runs.get(input.runId);
  const used = run ? await ports.executions.historyLength(run.executionArn) : 0;
  if (agentTurnFits(used, ports.config.HISTORY_EVENT_BUDGET)) return output;
  // The next execution's turn finds a question still open and waits for it there.
  return { runId: output.runId, mode: output.mode, done: false, turn: output.turn, next: "continue" };
}
