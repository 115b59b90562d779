import { DescribeExecutionCommand, SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_ACCOUNT, LOCAL_REGION } from "../../../../infra/local/account.js";
import { LocalStepFunctions } from "../../../../infra/local/stepFunctions.js";
import type { Executions } from "../../../../shared/ports/executions.js";
import { nextExecutionArn } from "../../../../shared/run/continuation.js";
import { StepFunctionsExecutions } from "../../../../shared/store/stepFunctions.js";
import { MemoryExecutions } from "../../../../shared/testing/memoryExecutions.js";
import { freshId, TEST_CREDENTIALS } from "../../../support/dynalite.js";

/**
 * The executions port's contract: fake and Step Functions adapter alike, the adapter against the
 * local Step Functions endpoint running a state machine that waits for a callback, as a run waits
 * for a person.
 */

const definition = JSON.stringify({
  StartAt: "Wait for a person",
  States: {
    "Wait for a person": {
      Type: "Task",
      Resource: "arn:aws:states:::lambda:invoke.waitForTaskToken",
      Parameters: {
        FunctionName: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:ask`,
        Payload: { "token.$": "$$.Task.Token", "runId.$": "$$.Execution.Name" },
      },
      End: true,
    },
  },
});

/** The newest callback token each execution was handed, by run id. */
const tokens = new Map<string, string>();
let local: LocalStepFunctions | undefined;
let sfn: SFNClient | undefined;
beforeAll(async () => {
  local = new LocalStepFunctions(
    "Contract",
    definition,
    async (_fn, input) => void tokens.set((input as { runId: string }).runId, (input as { token: string }).token),
    {
      credentials: TEST_CREDENTIALS,
    },
  );
  sfn = new SFNClient({ endpoint: await local.listen(), region: LOCAL_REGION, credentials: TEST_CREDENTIALS });
});
afterAll(async () => {
  sfn?.destroy();
  await local?.close();
});

async function tokenOf(runId: string): Promise<string> {
  for (let i = 0; i < 500 && !tokens.has(runId); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return tokens.get(runId)!;
}

describe.each([
  {
    name: "in memory",
    make: () => {
      const executions = new MemoryExecutions();
      return { executions: executions as Executions, waitingToken: async (runId: string) => executions.issueToken(`token_${runId}`) };
    },
  },
  {
    name: "Step Functions adapter on the local endpoint",
    make: () => ({ executions: new StepFunctionsExecutions(sfn!, local!.aliasArn) as Executions, waitingToken: tokenOf }),
  },
])("executions port: $name", ({ make }) => {
  it("a run's execution is named after the run and started once; starting it again while it runs is not an error", async () => {
    const { executions } = make();
    const runId = freshId("run");
    const arn = executions.arnFor(runId);
    expect(arn).toMatch(new RegExp(`:execution:[^:]+:${runId}$`));
    expect(await executions.describe(arn)).toBe("missing");
    expect(await executions.start(runId)).toBe(true);
    expect(await executions.start(runId)).toBe(true);
    expect(await executions.describe(arn)).toBe("RUNNING");
    await executions.stop(arn, "Test.Cleanup", "end of test");
  });

  it("a waiting callback is completed once: its token is dead after that", async () => {
    const { executions, waitingToken } = make();
    const runId = freshId("run");
    await executions.start(runId);
    const token = await waitingToken(runId);
    expect(await executions.sendTaskSuccess(token, { decision: "approve" })).toBe(true);
    expect(await executions.sendTaskSuccess(token, { decision: "reject" })).toBe(false);
    await executions.stop(executions.arnFor(runId), "Test.Cleanup", "end of test");
  });

  it("a stopped execution is aborted and can be redriven; one that does not exist can be neither", async () => {
    const { executions } = make();
    const runId = freshId("run");
    const arn = executions.arnFor(runId);
    await executions.start(runId);
    expect(await executions.stop(arn, "Stepwise.Cancelled", "cancelled by a person")).toBe(true);
    expect(await executions.describe(arn)).toBe("ABORTED");
    expect(await executions.redrive(arn, `redrive-${runId}`)).toBe(true);
    expect(await executions.describe(arn)).toBe("RUNNING");
    expect(await executions.redrive(arn, `again-${runId}`)).toBe(false);
    const nobody = executions.arnFor(freshId("run"));
    expect(await executions.stop(nobody, "Stepwise.Cancelled", "no such run")).toBe(false);
    expect(await executions.redrive(nobody, "redrive-nobody")).toBe(false);
    await executions.stop(arn, "Test.Cleanup", "end of test");
  });
});

describe("a run's continuation stays on the version its run started on", () => {
  it("a deploy between the run's start and its continuation does not move the run; new runs start on the deploy", async () => {
    const executions = new StepFunctionsExecutions(sfn!, local!.aliasArn);
    const runId = freshId("run");
    const first = executions.arnFor(runId);
    await executions.start(runId);
    const started = await sfn!.send(new DescribeExecutionCommand({ executionArn: first }));
    const deployed = local!.publishVersion(definition); // a deploy: the alias moves to the new version
    expect(deployed).not.toBe(started.stateMachineVersionArn);

    const next = nextExecutionArn(first, runId);
    expect(await executions.startContinuation(first, next, JSON.stringify({ runId }))).toBe(true);
    const continued = await sfn!.send(new DescribeExecutionCommand({ executionArn: next }));
    expect(continued.stateMachineVersionArn).toBe(started.stateMachineVersionArn);
    // A repeated call finds it running (ContinueRun retried).
    expect(await executions.startContinuation(first, next, JSON.stringify({ runId }))).toBe(true);

    const later = freshId("run");
    await executions.start(later);
    const fresh = await sfn!.send(new DescribeExecutionCommand({ executionArn: executions.arnFor(later) }));
    expect(fresh.stateMachineVersionArn).toBe(deployed);
    for (const arn of [first, next, executions.arnFor(later)]) await executions.stop(arn, "Test.Cleanup", "end of test");
  });
});
