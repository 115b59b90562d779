import { createHash } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ExecutionDoesNotExist, type SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseClients, connectTable } from "../../../../functions/awsClients.js";
import { secretsPort, toolsPort } from "../../../../functions/toolPorts.js";
import { HANDLER_USES } from "../../../../functions/uses.js";
import { wire } from "../../../../functions/wiring.js";
import { ensureTable, startDynamo } from "../../../../infra/local/dynamo.js";
import { decideInterrupt } from "../../../../shared/agent/interrupts.js";
import type { NotifyMessage } from "../../../../shared/contracts/notify.js";
import { executionInput } from "../../../../shared/contracts/steps.js";
import type { HandlerPorts } from "../../../../shared/handlerPorts.js";
import { cancelRun } from "../../../../shared/run/cancel.js";
import { submitRun } from "../../../../shared/run/submit.js";
import { settingsFromEnv } from "../../../../shared/settings.js";
import type { Table } from "../../../../shared/store/table.js";
import { TEST_CREDENTIALS } from "../../../support/dynalite.js";

/**
 * Submitting, cancelling and deciding when things go wrong, against DynamoDB's wire protocol
 * (dynalite, in this process) with Step Functions faked (its answers scripted per action): what
 * is given back when creating a run fails, and what happens when a run's execution has gone.
 */

const STATE_MACHINE = "arn:aws:states:us-east-1:000000000000:stateMachine:Stepwise";
let dynamo: Awaited<ReturnType<typeof startDynamo>>;
let table: Table;
let tenantCounter = 0;

beforeAll(async () => {
  dynamo = await startDynamo({ credentials: TEST_CREDENTIALS });
  const clientConfig = { endpoint: dynamo.endpoint, region: "us-east-1", credentials: TEST_CREDENTIALS };
  await ensureTable(new DynamoDBClient(clientConfig), "stepwise");
  table = connectTable("stepwise", clientConfig);
});

afterAll(async () => dynamo?.close());

/** A fake Step Functions client: each action answers from the script (a value, or an error to throw). */
function fakeSfn(script: Record<string, (input: any) => unknown>) {
  const calls: { action: string; input: any }[] = [];
  const client = {
    async send(command: { constructor: { name: string }; input: unknown }) {
      const action = command.constructor.name.replace(/Command$/, "");
      calls.push({ action, input: command.input });
      const answer = script[action];
      if (!answer) throw new Error(`unexpected ${action}`);
      return answer(command.input);
    },
  };
  return { client: client as unknown as SFNClient, calls };
}

function services(sfn: SFNClient, overrides: Partial<HandlerPorts> = {}) {
  const sent: NotifyMessage[] = [];
  const settings = settingsFromEnv({ TABLE_NAME: "stepwise", STATE_MACHINE_ARN: STATE_MACHINE, MAX_ACTIVE_RUNS_PER_TENANT: "2" });
  const notifyQueue = {
    send: async (m: NotifyMessage) => void sent.push(m),
    deadLetter: async () => undefined,
  } as unknown as HandlerPorts["notifyQueue"];
  const clients = { ...baseClients("stepwise", "us-east-1"), table, sfn: async () => sfn };
  const ports = wire(
    HANDLER_USES.Api,
    { tools: toolsPort, secrets: secretsPort },
    { settings, clients, ports: { notifyQueue, ...overrides } },
  );
  return { services: ports, sent };
}

const links = { api: "http://localhost", stream: "http://localhost", console: false };
const request = { input: "What is 2+2?", mode: "react" as const };
const tenant = () => `t${++tenantCounter}_${Date.now()}`;

async function activeRuns(tenantId: string): Promise<number> {
  const { Item } = await table.getItem({ Key: { pk: `TENANT#${tenantId}`, sk: "ACTIVE_RUNS" }, ConsistentRead: true });
  return Number(Item?.count ?? 0);
}

const started = () => ({ executionArn: "arn", startDate: new Date() });

describe("creating a run that fails gives back the Idempotency-Key and the tenant's slot", () => {
  it("when the execution cannot be started: 503, the run ends failed, and a retry with the same key creates a new run", async () => {
    const tenantId = tenant();
    const broken = fakeSfn({ StartExecution: () => Promise.reject(new Error("Step Functions is unavailable")) });
    const { services: failing } = services(broken.client);
    const error = await submitRun(failing, tenantId, request, { links, idempotencyKey: "key-1" }).catch((e) => e);
    expect(error).toMatchObject({ statusCode: 503 });
    expect(await activeRuns(tenantId)).toBe(0);

    const { services: working } = services(fakeSfn({ StartExecution: started }).client);
    const retried = await submitRun(working, tenantId, request, { links, idempotencyKey: "key-1" });
    expect(retried.replayed).toBe(false);
    expect(retried.run.status).toBe("queued");
    const failedRunId = broken.calls[0]!.input.name as string;
    expect(retried.run.runId).not.toBe(failedRunId);
    expect((await working.runs.get(failedRunId))?.status).toBe("failed");
    // The key now stands for the new run.
    const again = await submitRun(working, tenantId, request, { links, idempotencyKey: "key-1" });
    expect(again).toMatchObject({ replayed: true, run: { runId: retried.run.runId } });
  });

  it("when the run cannot be recorded: the error goes through, and neither key nor slot stays taken", async () => {
    const tenantId = tenant();
    const sfn = fakeSfn({ StartExecution: started });
    const base = services(sfn.client).services;
    const runs = Object.create(base.runs, { create: { value: () => Promise.reject(new Error("throttled")) } });
    const { services: failing } = services(sfn.client, { runs });
    await expect(submitRun(failing, tenantId, request, { links, idempotencyKey: "key-2" })).rejects.toThrow("throttled");
    expect(await activeRuns(tenantId)).toBe(0);
    expect(sfn.calls).toHaveLength(0);
    const retried = await submitRun(base, tenantId, request, { links, idempotencyKey: "key-2" });
    expect(retried.replayed).toBe(false);
    expect(await activeRuns(tenantId)).toBe(1);
  });

  it("when the tenant is at its limit: 429, and the key is free for the retry", async () => {
    const tenantId = tenant();
    const { services: s } = services(fakeSfn({ StartExecution: started }).client);
    await submitRun(s, tenantId, request, { links });
    await submitRun(s, tenantId, request, { links });
    await expect(submitRun(s, tenantId, request, { links, idempotencyKey: "key-3" })).rejects.toMatchObject({ statusCode: 429 });
    expect(await activeRuns(tenantId)).toBe(2);
    const { Item } = await table.getItem({
      Key: { pk: `TENANT#${tenantId}`, sk: `IDEM#${createHash("sha256").update("key-3").digest("hex")}` },
    });
    expect(Item).toBeUndefined();
  });

  it("a claim left in progress by a request that died is taken over once it expires", async () => {
    const tenantId = tenant();
    const { services: s } = services(fakeSfn({ StartExecution: started }).client);
    const key = { pk: `TENANT#${tenantId}`, sk: `IDEM#${createHash("sha256").update("key-4").digest("hex")}` };
    const bodyHash = createHash("sha256").update(JSON.stringify(request)).digest("hex");
    const claim = (inProgressUntil: number) =>
      table.putItem({ Item: { ...key, runId: "run_died", bodyHash, inProgressUntil, ttl: inProgressUntil + 86_400 } });
    await claim(Math.floor(Date.now() / 1000) + 60);
    await expect(submitRun(s, tenantId, request, { links, idempotencyKey: "key-4" })).rejects.toMatchObject({ statusCode: 409 });
    await claim(Math.floor(Date.now() / 1000) - 1);
    const taken = await submitRun(s, tenantId, request, { links, idempotencyKey: "key-4" });
    expect(taken.replayed).toBe(false);
  });
});

describe("a run whose execution has gone", () => {
  const gone = () => Promise.reject(new ExecutionDoesNotExist({ message: "Execution Does Not Exist", $metadata: {} }));

  it("cancel: the run ends cancelled, its slot is free, and its terminal webhook is queued", async () => {
    const tenantId = tenant();
    const { services: s, sent } = services(fakeSfn({ StartExecution: started, DescribeExecution: gone, StopExecution: gone }).client);
    const { run } = await submitRun(s, tenantId, request, { links });
    await cancelRun(s, run, "no longer needed");
    expect((await s.runs.get(run.runId))?.status).toBe("cancelled");
    expect(await activeRuns(tenantId)).toBe(0);
    expect(sent).toContainEqual({ kind: "ended", runId: run.runId });
  });

  async function waitingRun(sfn: ReturnType<typeof fakeSfn>) {
    const { services: s } = services(sfn.client);
    const { run } = await submitRun(s, tenant(), request, { links });
    await s.runs.update(run.runId, { status: "awaiting_input" });
    await s.interrupts.open({
      schemaVersion: 1,
      status: "pending",
      createdAt: new Date().toISOString(),
      interruptId: "int_1",
      runId: run.runId,
      kind: "tool_approval",
      summary: "Run write_artifact",
    });
    await s.interrupts.attachToken(run.runId, "int_1", "AQdead");
    return { s, run: (await s.runs.get(run.runId))! };
  }
  const timedOut = () => Promise.reject(Object.assign(new Error("Task Timed Out"), { name: "TaskTimedOut" }));

  it("a decision on its dead token starts the execution again, so the waiting state runs and finds the decision", async () => {
    const sfn = fakeSfn({ StartExecution: started, SendTaskSuccess: timedOut, DescribeExecution: gone });
    const { s, run } = await waitingRun(sfn);
    const decided = await decideInterrupt(s, run, "int_1", { decision: "approve" }, () => undefined);
    expect(decided.status).toBe("resolved");
    expect(sfn.calls.map((c) => c.action)).toEqual(["StartExecution", "SendTaskSuccess", "DescribeExecution", "StartExecution"]);
    expect(sfn.calls.at(-1)!.input).toMatchObject({ name: run.runId, input: executionInput(run.runId) });
  });

  it("a decision on its dead token when the execution failed redrives it", async () => {
    const sfn = fakeSfn({
      StartExecution: started,
      SendTaskSuccess: timedOut,
      DescribeExecution: () => ({ status: "FAILED" }),
      RedriveExecution: () => ({ redriveDate: new Date() }),
    });
    const { s, run } = await waitingRun(sfn);
    await decideInterrupt(s, run, "int_1", { decision: "approve" }, () => undefined);
    expect(sfn.calls.at(-1)).toMatchObject({ action: "RedriveExecution", input: { executionArn: run.executionArn } });
  });

  it("a decision on its dead token when the execution cannot go on is a 409, and the run ends instead of waiting forever", async () => {
    const notRedrivable = () => Promise.reject(Object.assign(new Error("not redrivable"), { name: "ExecutionNotRedrivable" }));
    const sfn = fakeSfn({
      StartExecution: started,
      SendTaskSuccess: timedOut,
      DescribeExecution: () => ({ status: "FAILED" }),
      RedriveExecution: notRedrivable,
    });
    const { s, run } = await waitingRun(sfn);
    await expect(decideInterrupt(s, run, "int_1", { decision: "approve" }, () => undefined)).rejects.toMatchObject({ statusCode: 409 });
    expect((await s.runs.get(run.runId))?.status).toBe("failed");
    expect(await activeRuns(run.tenantId)).toBe(0);
  });
});
