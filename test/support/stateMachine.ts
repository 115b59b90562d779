import type { ExecuteTaskInput, PlanOutput, RunState, TaskResult } from "../../shared/contracts/steps.js";
import type { Ports } from "../../shared/ports/index.js";
import { agentTurn } from "../../shared/steps/agentTurn.js";
import { awaitInterrupt } from "../../shared/steps/awaitInterrupt.js";
import { executeTask } from "../../shared/steps/executeTask.js";
import { finalize } from "../../shared/steps/finalize.js";
import { plan } from "../../shared/steps/plan.js";
import { recordFailure } from "../../shared/steps/recordFailure.js";
import { recordTaskFailure } from "../../shared/steps/recordTaskFailure.js";
import { routeRequest } from "../../shared/steps/routeRequest.js";
import { startRun } from "../../shared/steps/startRun.js";
import { summarize } from "../../shared/steps/summarize.js";
import type { MemoryExecutions } from "../../shared/testing/memoryExecutions.js";

export interface DriveOptions {
  /**
   * Runs one state's step with the ports it is given (one Lambda invocation); a test wraps it, e.g.
   * to crash it and run it again with the same input, as the state's Retry would.
   */
  attempt?: <T>(state: string, step: (ports: Ports) => Promise<T>) => Promise<T>;
  /** A person decides the interrupt the run waits on (through the API's decideInterrupt). */
  decide?: (interruptId: string) => Promise<void>;
  /** The executions fake: "Wait for …" states get their task tokens from it. */
  executions?: MemoryExecutions;
}

/**
 * Plays the state machine of infra/orchestration.ts over the step modules, in its order: Start run,
 * Route request, the ReAct loop of Agent turn / Wait for input, or Plan / Wait for plan approval /
 * Execute tasks (a Map, each task until done, a crashed executor caught by Record task failure) /
 * Summarize, then Finalize; any other error goes to Record failure. Returns the last state's output.
 */
export async function driveRun(ports: Ports, runId: string, options: DriveOptions = {}): Promise<unknown> {
  const attempt = options.attempt ?? (<T>(_state: string, step: (ports: Ports) => Promise<T>) => step(ports));
  let tokens = 0;
  const waitFor = async (interruptId: string) => {
    const taskToken = options.executions?.issueToken(`AQtoken_${runId}_${++tokens}`) ?? `AQtoken_${++tokens}`;
    await attempt("AwaitInterrupt", (ports) => awaitInterrupt({ runId, interruptId, taskToken }, ports));
    if (!options.decide) throw new Error(`run ${runId} waits for ${interruptId}, and the test decides nothing`);
    await options.decide(interruptId);
  };
  try {
    let state: RunState = await attempt("StartRun", (ports) => startRun({ runId }, ports));
    if (state.mode === "route") state = await attempt("RouteRequest", (ports) => routeRequest(state, ports));
    if (state.mode === "react") {
      let turn = await attempt("AgentTurn", (ports) => agentTurn(state, ports));
      while (!turn.done || turn.interruptId) {
        if (turn.interruptId) await waitFor(turn.interruptId);
        const input = turn;
        turn = await attempt("AgentTurn", (ports) => agentTurn(input, ports));
      }
    } else if (state.mode === "plan_solve") {
      let output: PlanOutput = await attempt("Plan", (ports) => plan(state, ports));
      for (;;) {
        if (output.next === "approve") {
          await waitFor(output.interruptId!);
        } else if (output.next === "execute") {
          const from = output;
          const taskResults = await Promise.all(from.tasks.map((task) => runTask({ runId, iteration: from.iteration, task }, ports, attempt, waitFor)));
          output = { ...from, taskResults } as PlanOutput;
        } else break;
        const input = output;
        output = await attempt("Plan", (ports) => plan(input, ports));
      }
      await attempt("Summarize", (ports) => summarize({ runId }, ports));
    }
    return await attempt("Finalize", (ports) => finalize({ runId }, ports));
  } catch (error) {
    const caught = { Error: (error as Error).name || "Error", Cause: JSON.stringify({ errorType: (error as Error).name, errorMessage: (error as Error).message }) };
    return attempt("RecordFailure", (ports) => recordFailure({ runId, error: caught }, ports));
  }
}

/** One Map item: "Execute task" until done (waiting for a person when it asks), a crash caught by "Record task failure". */
async function runTask(input: ExecuteTaskInput, ports: Ports, attempt: NonNullable<DriveOptions["attempt"]>, waitFor: (interruptId: string) => Promise<void>): Promise<TaskResult> {
  try {
    let result = await attempt("ExecuteTask", (ports) => executeTask(input, ports));
    while (!result.done) {
      if (result.interruptId) await waitFor(result.interruptId);
      result = await attempt("ExecuteTask", (ports) => executeTask(input, ports));
    }
    return result;
  } catch (error) {
    const caught = { Error: (error as Error).name || "Error", Cause: (error as Error).message };
    return attempt("RecordTaskFailure", (ports) => recordTaskFailure({ ...input, error: caught }, ports));
  }
}
