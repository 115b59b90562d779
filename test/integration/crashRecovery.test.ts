import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/contracts/events.js";
import { TERMINAL_EVENTS } from "../../shared/contracts/terminal.js";
import { Behind } from "../support/aws.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type Endpoint, Receiver } from "../support/receiver.js";

/**
 * Crash recovery (issue 13): `npm start` on a kept data folder is killed — its whole process tree,
 * at once — while runs are in flight, two of them waiting for a person (a plan approval, and a
 * tool approval inside the "Execute tasks" Map). After a restart on the same folder every run
 * reaches a terminal state with its events complete and gap-free, its webhook is delivered, the
 * interrupts opened before the crash are decided afterwards, and the tenant's slots are all free;
 * stopped at last, the stack stops its containers.
 */

const REPORT_INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";
const TERMINAL = ["succeeded", "failed", "cancelled", "timed_out"];
const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));

let dataDir: string;
let receiver: Receiver;
let hook: Endpoint;
let first: RunningStack | undefined;
let second: RunningStack | undefined;

/** `latencyMs`: a slow model before the crash keeps runs in flight; after it, the runs only have to end. */
const start = (latencyMs: number) =>
  startStack(
    // No STEPWISE_API_KEY: the stack keeps its own key in the data folder.
    // The step functions in two containers, as on AWS: the crash also kills writers between taking an event number and writing it.
    { STEPWISE_DATA_DIR: dataDir, STEPWISE_API_KEY: "", OFFLINE_MODEL_LATENCY_MS: String(latencyMs), STEPWISE_LOCAL_CONTAINERS: "2" },
    [],
  );

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "stepwise-crash-"));
  receiver = await Receiver.start();
  hook = receiver.endpoint();
});

afterAll(async () => {
  await first?.kill();
  await second?.stop();
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Approves whatever the run waits for, until it ends. */
async function approveUntilEnd(client: Client, runId: string, timeoutMs: number): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await client.run(runId);
    if (TERMINAL.includes(run.status)) return run;
    for (const pending of run.pendingInterrupts ?? []) {
      const decision = pending.kind === "ask_user" ? { decision: "answer", message: "go on" } : { decision: "approve" };
      const reply = await client.request("POST", `/v1/runs/${runId}/interrupts/${pending.interruptId}`, decision);
      // 202 (decided now) or 409 (decided already): never a server error.
      expect([202, 409]).toContain(reply.status);
    }
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function expectGapFree(runId: string, events: RunEvent[]) {
  const seqs = events.map((e) => e.seq);
  expect(seqs, `${runId}: event numbers`).toEqual(seqs.map((_, i) => i + 1));
  const terminal = events.filter((e) => TERMINAL_EVENTS.has(e.type));
  expect(
    terminal.map((e) => e.seq),
    `${runId}: one terminal event, the last`,
  ).toEqual([events.length]);
}

describe("kill -9 of the whole stack with runs in flight, then restart on the same data folder", () => {
  it("ends every run with complete events, delivers every webhook, frees every slot, and keeps the API key", async () => {
    first = await start(250);
    const before = new Client(first.url, first.apiKey);
    const webhook = { url: hook.url };
    const submit = async (body: Record<string, unknown>) => {
      return (await before.submit({ ...body, webhook })).runId;
    };
    const planApproval = await submit({ input: REPORT_INPUT, mode: "plan_solve", approval: { plan: true } });
    const toolApproval = await submit({ input: REPORT_INPUT, mode: "plan_solve", approval: { tools: "write" } });
    const busy = [
      await submit({ input: REPORT_INPUT, mode: "plan_solve" }),
      await submit({ input: REPORT_INPUT, mode: "plan_solve" }),
      await submit({ input: "What is 17*23?", mode: "react" }),
    ];
    const runIds = [planApproval, toolApproval, ...busy];
    const [{ pending: planPending }, { pending: toolPending }] = await Promise.all([
      before.waitForPending(planApproval, 1, 60_000),
      before.waitForPending(toolApproval, 1, 60_000),
    ]);
    expect(planPending[0].kind).toBe("plan_approval");
    expect(toolPending[0].kind).toBe("tool_approval");
    // The crash must hit runs in flight: at least the two waiting ones and one still working.
    const statuses = await Promise.all(runIds.map(async (id) => (await before.run(id)).status));
    expect(statuses.filter((s) => !TERMINAL.includes(s)).length).toBeGreaterThanOrEqual(3);

    const firstKey = first.apiKey;
    await first.kill();
    first = undefined;

    second = await start(50);
    expect(second.apiKey, "one API key per data folder").toBe(firstKey);
    const after = new Client(second.url, second.apiKey);
    expect(second.logs.join("\n")).toMatch(/resumed \d+ run\(s\) that were in flight/);

    // The interrupts opened before the crash are decided after it, and move their runs on.
    const planReply = await after.request("POST", `/v1/runs/${planApproval}/interrupts/${planPending[0].interruptId}`, {
      decision: "approve",
    });
    expect(planReply.status).toBe(202);
    const toolReply = await after.request("POST", `/v1/runs/${toolApproval}/interrupts/${toolPending[0].interruptId}`, {
      decision: "approve",
    });
    expect(toolReply.status).toBe(202);

    const ended = await Promise.all(runIds.map((id) => approveUntilEnd(after, id, 120_000)));
    expect(ended.map((r) => r.status)).toEqual(runIds.map(() => "succeeded"));

    for (const runId of runIds) expectGapFree(runId, await after.allEvents(runId));

    // Each run's terminal webhook arrived (once per delivery id: the webhook-id is stable).
    await Promise.all(
      runIds.map((runId) =>
        hook.waitForRequest((r) => JSON.parse(r.body).data.runId === runId && JSON.parse(r.body).type === "run.succeeded", 30_000),
      ),
    );

    // The tenant's slots are all free again.
    const behind = new Behind(second.endpoints!);
    try {
      const { Item } = await behind.dynamo.send(
        new GetItemCommand({
          TableName: second.endpoints!.tableName,
          Key: { pk: { S: "TENANT#local" }, sk: { S: "ACTIVE_RUNS" } },
          ConsistentRead: true,
        }),
      );
      expect(Number(Item?.count?.N ?? 0)).toBe(0);
    } finally {
      behind.destroy();
    }

    // Stopped as Ctrl-C does, the stack stops its containers (a crash of the stack alone is in containers.test.ts).
    const containers = second.containerPids;
    expect(containers).toHaveLength(2);
    expect(containers.every(alive)).toBe(true);
    await second.stop();
    second = undefined;
    const deadline = Date.now() + 20_000;
    while (containers.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(containers.filter(alive)).toEqual([]);
  }, 400_000); // two starts and eleven runs on a busy machine: a wide bound, not a measure
});
