import { agentTurn as reactTurn, type ReactPorts } from "../agent/react.js";
import type { AgentTurnOutput, RunState } from "../contracts/steps.js";
import type { StepPorts } from "../ports/index.js";

export type AgentTurnPorts = StepPorts<keyof ReactPorts>;

/** "Agent turn" (react): think/act rounds until the answer, the round budget, or the time is nearly up. */
export function agentTurn(input: RunState & { turn?: number }, ports: AgentTurnPorts): Promise<AgentTurnOutput> {
  return reactTurn({ runId: input.runId, ports, deadline: ports.deadline }, input);
}
