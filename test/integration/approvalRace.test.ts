import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, it } from "vitest";
import { Behind } from "../support/aws.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * A decision can arrive before the "Wait for …" state has stored its task token: a bot answering the
 * `run.awaiting_input` webhook, `stepwise run --yes`. The waiting function then finds the decision
 * and resumes the run itself (SendTaskSuccess, which its role must allow on AWS — see
 * test/infra/iamCoverage.test.ts). Here the local stack starts that function 4 s late, as a cold
 * start might, and each test decides at once: every run must still complete, inside the Map too.
 */
let stack: RunningStack;
let client: Client;
let behind: Behind;

beforeAll(async () => {
  stack = await startStack({ INTERRUPT_TIMEOUT_SECONDS: "3600", LOCAL_CALLBACK_START_DELAY_MS: "4000" }, [], { exposeEndpoints: true });
  client = new Client(stack.url, stack.apiKey);
  behind = new Behind(stack.endpoints!);
});

afterAll(async () => {
  behind?.destroy();
  await stack?.stop();
});

/** Whether the interrupt item holds a task token yet. */
async function tokenStored(runId: string, interruptId: string): Promise<boolean> {
  const { Item } = await behind.dynamo.send(
    new GetItemCommand({
      TableName: stack.endpoints!.tableName,
      Key: { pk: { S: `RUN#${runId}` }, sk: { S: `INT#${interruptId}` } },
      ConsistentRead: true,
    }),
  );
  return Boolean(Item?.taskToken?.S);
}

describe("a decision that arrives before the task token is stored", () => {
  // Each run waits out the 4 s on its own: they run side by side.
  it.concurrent.for([
    {
      wait: "Wait for plan approval",
      body: { input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve", approval: { plan: true } },
      decision: { decision: "approve" },
      kind: "plan_approval",
    },
    {
      wait: "Wait for tool approval (inside the Map)",
      body: { input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve", approval: { tools: "write" } },
      decision: { decision: "approve" },
      kind: "tool_approval",
    },
    {
      wait: "Wait for input (ask_user)",
      body: { input: "Please ask me first, then count the words in this sentence", mode: "react" },
      decision: { decision: "answer", message: "Go ahead" },
      kind: "ask_user",
    },
  ])("$wait: the run resumes by itself and succeeds", { timeout: 120_000 }, async ({ body, decision, kind }, { expect }) => {
    const { runId } = await client.submit(body);
    const { pending } = await client.waitForPending(runId, 1);
    const interrupt = pending[0];
    expect(interrupt.kind).toBe(kind);

    const decided = await client.decide(runId, interrupt.interruptId, decision);
    expect(decided.status).toBe(202);
    // The race really happened: the decision is recorded, the token not yet.
    expect(await tokenStored(runId, interrupt.interruptId)).toBe(false);

    const end = await client.waitForEnd(runId, 90_000);
    expect(end.run.status, JSON.stringify(end.run.error)).toBe("succeeded");
    expect(end.run.interrupts.map((i: any) => [i.kind, i.status])).toContainEqual([kind, "resolved"]);
    // The waiting function did store the token, then resumed the run itself.
    expect(await tokenStored(runId, interrupt.interruptId)).toBe(true);
    expect(end.events.filter((e) => e.type === "interrupt.resolved")).toHaveLength(end.run.interrupts.length);
  });
});
