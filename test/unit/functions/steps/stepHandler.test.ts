import path from "node:path";
import { setImmediate as tick } from "node:timers/promises";
import { paginateGetExecutionHistory, SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { type StepDefinition, stepHandlerWith } from "../../../../functions/steps/stepHandler.js";
import { STEP_HANDLERS, type StepName } from "../../../../infra/aws/handlers.js";
import { LOCAL_REGION } from "../../../../infra/local/account.js";
import { localDefinition } from "../../../../infra/local/definitionCache.js";
import { invokeHandler } from "../../../../infra/local/lambda.js";
import { type ExecutionStatusChange, LocalStepFunctions } from "../../../../infra/local/stepFunctions.js";
import type { Ports } from "../../../../shared/ports/index.js";
import { StepFunctionsExecutions } from "../../../../shared/store/stepFunctions.js";
import { memoryPorts } from "../../../../shared/testing/memoryPorts.js";
import { TEST_CREDENTIALS } from "../../../support/dynalite.js";
import { attemptPorts, Faults, type Life } from "../../../support/faults.js";
import { runRecord } from "../../../support/records.js";
import { teamModel } from "../../../support/team.js";

/**
 * Fault injection: a run goes through the synthesized state machine (the ASL the stack deploys, on
 * aws-local-stepfunctions), each Task invoking its step function's handler over in-memory ports.
 * The k-th fault point (before and after each model call, tool call, event append and journal
 * write, and after each state's output) crashes the invocation that reached it, and the state
 * machine's own Retry runs the state again with the same input. For every k until a run passes
 * with no crash, the run ends as the crash-free run did, and each write tool's side effect
 * happened exactly once.
 *
 * One crash per run: a crashed invocation surfaces as Lambda.Unknown, which the definition retries
 * at most twice per entry into a state (infra/aws/orchestration.ts, STEP_RETRIES), so a single crash is
 * always retried; three in a row in one state would fail the execution ("Execute task": the task).
 */

interface Outcome {
  /** The execution's end: its status, and its error if it failed. */
  execution: string;
  status?: string;
  result?: string;
  /** Writes (puts that stored bytes) per file name. */
  writesPerFile: Record<string, number>;
  /** file.created events per file name. */
  announcedPerFile: Record<string, number>;
  slotsTaken: number;
  crashedAt?: string;
  /**
   * Crashed invocations in the execution's history (Lambda.Unknown): the state's Retry ran each
   * again (a Catch would have changed the answer, or failed the run).
   */
  retries: number;
  points: number;
}

/** A run under test: its ports, and the fault points its invocations pass. */
interface RunUnderTest {
  memory: ReturnType<typeof memoryPorts>;
  faults: Faults;
}

const root = path.resolve(import.meta.dirname, "../../../..");
/** Each step function's definition (state, input and output schemas, step), from its handler module. */
const steps = new Map<StepName, StepDefinition<z.ZodType, z.ZodType, Ports>>();
const runs = new Map<string, RunUnderTest>();
let functions: Map<string, StepName>;
let local: LocalStepFunctions;
let sfn: SFNClient;
let executions: StepFunctionsExecutions;

/**
 * How Step Functions reports an invocation whose process died before it answered: "Unhandled
 * errors in Lambda are reported as Lambda.Unknown … These include out-of-memory errors and
 * function timeouts" (Step Functions developer guide, "Handle Lambda service exceptions").
 */
function processDied(label: string): Error {
  const error = new Error(
    JSON.stringify({ errorType: "Runtime.ExitError", errorMessage: `Runtime exited with error: signal: killed (${label})` }),
  );
  error.name = "Lambda.Unknown";
  return error;
}

/** One invocation of a step function: its handler, over the ports of one attempt of its run. */
async function invoke(functionArn: string, input: unknown): Promise<unknown> {
  const name = functions.get(functionArn);
  if (!name) throw new Error(`no step function ${functionArn}`);
  if (name === "AwaitInterrupt") throw new Error("the run waits for a person, and this team never asks one");
  const event = input as { runId?: string; state?: { runId?: string } };
  const run = runs.get(event.runId ?? event.state?.runId ?? "");
  if (!run) throw new Error(`no run under test for ${JSON.stringify(input)}`);
  const life: Life = { dead: false };
  const handler = stepHandlerWith(steps.get(name)!, () => attemptPorts(run.memory, life, run.faults, executions));
  try {
    const output = await invokeHandler(handler as Parameters<typeof invokeHandler>[0], name, input);
    run.faults.point(life, `${name} output`);
    return output;
  } catch (error) {
    if (!life.dead) throw error; // the step's own error, as Lambda reports it
    // What the dead attempt still had in flight fails now; then Lambda reports the crash.
    for (let i = 0; i < 5; i++) await tick();
    throw processDied(run.faults.crashedAt ?? (error as Error).message);
  }
}

beforeAll(async () => {
  const machine = await localDefinition({});
  functions = machine.functions;
  for (const [name, entry] of Object.entries(STEP_HANDLERS)) {
    const module = (await import(path.join(root, entry))) as { step: StepDefinition<z.ZodType, z.ZodType, Ports> };
    steps.set(name as StepName, module.step);
  }
  // Retries at once: the definition's backoff (seconds, with jitter) would only slow the test.
  local = new LocalStepFunctions("Stepwise", machine.definition, invoke, { credentials: TEST_CREDENTIALS, retryDelayMs: 0 });
  sfn = new SFNClient({ endpoint: await local.listen(), region: LOCAL_REGION, credentials: TEST_CREDENTIALS });
  executions = new StepFunctionsExecutions(sfn, local.aliasArn);
});

afterAll(async () => {
  sfn?.destroy();
  await local?.close();
});

async function runWithCrashAt(mode: "react" | "plan_solve", crashAt?: number): Promise<Outcome> {
  const memory = memoryPorts({ model: teamModel() });
  const { fakes } = memory;
  const runId = `run_${mode}_${crashAt ?? "clean"}`;
  await fakes.runs.create(runRecord(runId, { requestedMode: mode }));
  await fakes.activeRuns.acquire("tenant_1", 10);
  const faults = new Faults(crashAt);
  runs.set(runId, { memory, faults });
  try {
    const executionArn = executions.arnFor(runId);
    const ended = new Promise<ExecutionStatusChange>((resolve) => {
      const onStatus = (change: ExecutionStatusChange) => {
        if (change.executionArn !== executionArn || change.status === "RUNNING") return;
        local.off("status", onStatus);
        resolve(change);
      };
      local.on("status", onStatus);
    });
    expect(await executions.start(runId)).toBe(true);
    const execution = await ended;
    let retries = 0;
    for await (const page of paginateGetExecutionHistory({ client: sfn }, { executionArn })) {
      retries += (page.events ?? []).filter(
        (event) => event.type === "TaskFailed" && event.taskFailedEventDetails?.error === "Lambda.Unknown",
      ).length;
    }
    const run = await fakes.runs.get(runId);
    const writesPerFile: Record<string, number> = {};
    for (const write of fakes.files.writes) writesPerFile[write.name] = (writesPerFile[write.name] ?? 0) + 1;
    const announcedPerFile: Record<string, number> = {};
    for (const event of fakes.events.all(runId))
      if (event.type === "file.created") announcedPerFile[event.data.name] = (announcedPerFile[event.data.name] ?? 0) + 1;
    return {
      execution: execution.error ? `${execution.status} ${execution.error}: ${execution.cause}` : execution.status,
      status: run?.status,
      result: run?.result,
      writesPerFile,
      announcedPerFile,
      slotsTaken: await fakes.activeRuns.count("tenant_1"),
      crashedAt: faults.crashedAt,
      retries,
      points: faults.reached,
    };
  } finally {
    runs.delete(runId);
  }
}

describe.each(["react", "plan_solve"] as const)("a %s run crashed at every fault point", (mode) => {
  it("ends with the crash-free run's answer, each write tool's file written and announced exactly once", async () => {
    const clean = await runWithCrashAt(mode);
    expect(clean).toMatchObject({ execution: "SUCCEEDED", status: "succeeded", retries: 0, slotsTaken: 0 });
    expect(Object.values(clean.writesPerFile)).toEqual([1]);
    expect(Object.values(clean.announcedPerFile)).toEqual([1]);
    expect(clean.points).toBeGreaterThan(20);

    const crashed: string[] = [];
    for (let k = 1; ; k++) {
      const outcome = await runWithCrashAt(mode, k);
      if (!outcome.crashedAt) break; // past the last point: this run had no crash
      crashed.push(outcome.crashedAt);
      const seen = {
        k,
        at: outcome.crashedAt,
        execution: outcome.execution,
        status: outcome.status,
        result: outcome.result,
        writes: outcome.writesPerFile,
        announced: outcome.announcedPerFile,
        slots: outcome.slotsTaken,
      };
      expect(seen).toEqual({
        ...seen,
        execution: "SUCCEEDED",
        status: "succeeded",
        result: clean.result,
        writes: clean.writesPerFile,
        announced: clean.announcedPerFile,
        slots: 0,
      });
      expect(outcome.retries).toBeGreaterThanOrEqual(1);
    }
    // Every kind of point was hit, the write tool's own among them.
    expect(crashed.length).toBe(clean.points);
    for (const label of [
      "before model call",
      "after model call",
      "before tool write_artifact",
      "after tool write_artifact",
      "before event append",
      "after event append",
      "before journal write",
      "after journal write",
      "Finalize output",
    ]) {
      expect(crashed).toContain(label);
    }
  });
});
