import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prunable, versionsInUse } from "../../../../infra/aws/versionsInUse.js";
import { LOCAL_ACCOUNT, LOCAL_REGION } from "../../../../infra/local/account.js";
import { LocalStepFunctions } from "../../../../infra/local/stepFunctions.js";
import { TEST_CREDENTIALS } from "../../../support/dynalite.js";

/**
 * Which state machine versions still have executions (before old ones are pruned: Step Functions
 * keeps at most 1,000), read through the Step Functions API from the local endpoint: executions
 * waiting on a person run on old versions, a failed one can still be redriven on its own.
 */
const definition = JSON.stringify({
  StartAt: "Wait for a person",
  States: {
    "Wait for a person": {
      Type: "Task",
      Resource: "arn:aws:states:::lambda:invoke.waitForTaskToken",
      Parameters: { FunctionName: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:ask`, Payload: { "fail.$": "$.fail" } },
      End: true,
    },
  },
});

let local: LocalStepFunctions | undefined;
let sfn: SFNClient | undefined;
beforeAll(async () => {
  local = new LocalStepFunctions(
    "Versions",
    definition,
    async (_fn, input) => {
      if ((input as { fail: boolean }).fail) throw new Error("the step failed");
    },
    { credentials: TEST_CREDENTIALS, retryDelayMs: 1 },
  );
  sfn = new SFNClient({ endpoint: await local.listen(), region: LOCAL_REGION, credentials: TEST_CREDENTIALS });
});
afterAll(async () => {
  sfn?.destroy();
  await local?.close();
});

const start = async (stateMachineArn: string, name: string, fail = false) => {
  await sfn!.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify({ fail }) }));
};
async function statusOf(name: string): Promise<string | undefined> {
  const executionArn = `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:execution:Versions:${name}`;
  return (await sfn!.send(new DescribeExecutionCommand({ executionArn }))).status;
}
async function until(name: string, status: string) {
  for (let i = 0; i < 1_000 && (await statusOf(name)) !== status; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await statusOf(name)).toBe(status);
}

describe("the state machine versions still in use", () => {
  it("names each version with running or redrivable executions, the newest always; only the others may be deleted", async () => {
    const machine = local!.stateMachineArn;
    const v1 = `${machine}:1`;
    await start(v1, "waits-on-1");
    const v2 = local!.publishVersion(definition);
    await start(v2, "fails-on-2", true);
    await until("fails-on-2", "FAILED");
    const v3 = local!.publishVersion(definition);
    const v4 = local!.publishVersion(definition);
    await start(local!.aliasArn, "waits-on-4");
    const v5 = local!.publishVersion(definition);
    await until("waits-on-1", "RUNNING");

    const uses = await versionsInUse(sfn!, machine);
    expect(uses).toEqual([
      { versionArn: v5, running: 0, redrivable: 0, newest: true },
      { versionArn: v4, running: 1, redrivable: 0, newest: false },
      { versionArn: v3, running: 0, redrivable: 0, newest: false },
      { versionArn: v2, running: 0, redrivable: 1, newest: false },
      { versionArn: v1, running: 1, redrivable: 0, newest: false },
    ]);
    expect(prunable(uses).map((u) => u.versionArn)).toEqual([v3]);
    // Past the redrive window (14 days), a failed execution no longer holds its version.
    const later = await versionsInUse(sfn!, machine, Date.now() + 15 * 24 * 3600 * 1000);
    expect(prunable(later).map((u) => u.versionArn)).toEqual([v3, v2]);
  });
});
