import { DescribeExecutionCommand, SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../infra/local/stack.js";
import { Client } from "../support/client.js";

/**
 * Deploys leave running runs alone (docs/operating.md, "Versions"): a run that waits for a person while a
 * deploy publishes version 2 of the step functions finishes on version 1, and a run started after
 * the deploy runs version 2. Version 2 changes "Finalize" (test/fixtures/versions/finalizeV2.ts),
 * which marks the answer it finalizes, so a user sees which code finished their run.
 */
const INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";
const MARK = "(finalized by version 2)";
const KEY = `sk_test_versions_${Math.random().toString(36).slice(2)}`;

let stack: LocalStack;
let client: Client;
let sfn: SFNClient;

beforeAll(async () => {
  // In this process: the test deploys through the stack's handle, as `cdk deploy` would on AWS.
  process.env.POWERTOOLS_LOG_LEVEL = "WARN";
  stack = await startLocalStack({
    port: 0,
    apiKeys: { [KEY]: "versions" },
    modelLatencyMs: 20,
    stateMachine: { interruptTimeoutSeconds: 3600 },
  });
  client = new Client(stack.url, KEY);
  const { sfn: endpoint, region, credentials } = stack.endpoints;
  sfn = new SFNClient({ endpoint, region, credentials });
});

afterAll(async () => {
  sfn?.destroy();
  await stack?.close();
});

describe("a deploy while a run waits for approval", () => {
  it("lets the waiting run finish on the version it started on, while new runs use the new version", async () => {
    const before = await client.submit({ input: INPUT, mode: "plan_solve", approval: { plan: true } });
    const { pending } = await client.waitForPending(before.runId, 1);

    const live = stack.deploy({ Finalize: "test/fixtures/versions/finalizeV2.ts" });
    expect(live).toBe(`${stack.endpoints.stateMachineArn}:2`);

    const after = await client.submit({ input: "What is 6*7?", mode: "plan_solve" });
    const decided = await client.decide(before.runId, pending[0].interruptId, { decision: "approve" });
    expect(decided.status).toBe(202);

    const [old, fresh] = await Promise.all([client.waitForEnd(before.runId), client.waitForEnd(after.runId)]);
    expect(old.run.status).toBe("succeeded");
    expect(fresh.run.status).toBe("succeeded");
    // The waiting run ran version 1's Finalize; the run started after the deploy, version 2's.
    expect(old.run.result).not.toContain(MARK);
    expect(fresh.run.result).toContain(MARK);

    // Step Functions says the same: each execution started through the alias, on its version.
    const described = await Promise.all(
      [old.run, fresh.run].map((run) => sfn.send(new DescribeExecutionCommand({ executionArn: run.executionArn }))),
    );
    expect(described.map((d) => [d.stateMachineAliasArn, d.stateMachineVersionArn])).toEqual([
      [stack.endpoints.stateMachineAliasArn, `${stack.endpoints.stateMachineArn}:1`],
      [stack.endpoints.stateMachineAliasArn, `${stack.endpoints.stateMachineArn}:2`],
    ]);
  });
});
