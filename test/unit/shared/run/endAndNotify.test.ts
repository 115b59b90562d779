import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openInterrupt } from "../../../../shared/agent/interrupts.js";
import type { RunRecord } from "../../../../shared/contracts/run.js";
import { sealPush } from "../../../../shared/protocols/a2a.js";
import { onExecutionStatus, onQueueMessage } from "../../../../shared/run/endAndNotify.js";
import { endRun } from "../../../../shared/run/lifecycle.js";
import { verifyWebhook } from "../../../../shared/webhooks/signing.js";
import { withRun } from "../../../support/memoryRun.js";
import { Receiver, type Script, scripts } from "../../../support/receiver.js";

/**
 * Sending a run's webhooks (the notify function's core) over in-memory ports, to a receiver on
 * loopback: what is signed, where it goes, how often, and what happens when the receiver fails.
 */

let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(async () => receiver?.close());

const settings = { webhooks: { policy: { allowLoopback: true, allowHttp: true } } };
const statusEvent = (run: RunRecord, status: "SUCCEEDED" | "FAILED" | "ABORTED", failure?: { error: string; cause: string }) => ({
  "detail-type": "Step Functions Execution Status Change" as const,
  source: "aws.states" as const,
  detail: { executionArn: run.executionArn, stateMachineArn: "arn:sm", name: run.runId, status, ...failure },
});

async function subscribed(script: Script = scripts.ok(), fields: Partial<RunRecord> = {}) {
  const endpoint = receiver.endpoint(script);
  const fixture = await withRun({ status: "running", webhook: { url: endpoint.url }, ...fields }, { settings });
  return { ...fixture, endpoint };
}

describe("notify", () => {
  it("a run that ended: one signed webhook to the run's URL (Standard Webhooks), however often the end is reported", async () => {
    const { ports, fakes, runId, run, endpoint } = await subscribed();
    await ports.runs.update(runId, { result: "4" });
    await endRun(ports, runId, "succeeded");
    await onExecutionStatus(ports, statusEvent(run, "SUCCEEDED"));
    await onExecutionStatus(ports, statusEvent(run, "SUCCEEDED"));
    await onQueueMessage(ports, { kind: "ended", runId });

    expect(endpoint.requests).toHaveLength(1);
    const [request] = endpoint.requests;
    const secrets = (await fakes.webhooks.secrets("tenant_1")).map((s) => s.secret);
    expect(() => verifyWebhook({ headers: request!.headers as Record<string, string>, body: request!.body, secrets })).not.toThrow();
    expect(request!.headers["webhook-id"]).toMatch(new RegExp(`^msg_${runId}_succeeded_[0-9a-z]+$`));
    expect(JSON.parse(request!.body)).toMatchObject({ type: "run.succeeded", data: { runId, status: "succeeded", result: "4" } });
    expect((await fakes.webhooks.listDeliveries(runId)).map((d) => d.status)).toEqual(["delivered"]);
  });

  it("an A2A client's push config: the same signed delivery, with the A2A task as the body and the config's token as a header", async () => {
    const endpoint = receiver.endpoint(scripts.ok());
    const { ports, fakes, runId, run } = await withRun(
      { status: "running", links: { self: "https://api.example.com/v1/runs/run_x", events: "e", stream: "s" } },
      { settings },
    );
    // The token is kept sealed, as the A2A server keeps it; the notifier opens it to send the push.
    const push = await sealPush(fakes.secrets, "tenant_1", { id: "cfg-1", token: "tok", wireVersion: "1.0" });
    await ports.runs.update(runId, { webhook: { url: endpoint.url, a2a: push } });
    await ports.files.put(runId, "report.md", "# Report");
    await ports.runs.update(runId, { result: "391" });
    await endRun(ports, runId, "succeeded");
    await onExecutionStatus(ports, statusEvent(run, "SUCCEEDED"));

    const [request] = endpoint.requests;
    const secrets = (await fakes.webhooks.secrets("tenant_1")).map((s) => s.secret);
    expect(() => verifyWebhook({ headers: request!.headers as Record<string, string>, body: request!.body, secrets })).not.toThrow();
    expect(request!.headers).toMatchObject({ "x-a2a-notification-token": "tok", "content-type": "application/a2a+json" });
    const { task } = JSON.parse(request!.body);
    expect(task).toMatchObject({ id: runId, contextId: run.sessionId, status: { state: "TASK_STATE_COMPLETED" } });
    expect(task.artifacts.map((a: { name: string }) => a.name)).toEqual(["answer", "report.md"]);
    expect(task.artifacts[1].parts[0].url).toBe(`https://api.example.com/v1/runs/${runId}/files/report.md`);
  });

  it("an interrupted run: its webhook is run.interrupted, sent when its execution has ended, and the run waiting behind it starts then", async () => {
    const { ports, fakes, runId, run, endpoint } = await subscribed(scripts.ok(), { sessionId: "ses_1", turn: 1 });
    await fakes.sessions.claim("tenant_1", "ses_1", runId, { queue: false });
    await fakes.runs.create({
      ...run,
      runId: "run_next",
      status: "queued",
      turn: 2,
      queuedBehind: runId,
      webhook: undefined,
      executionArn: fakes.executions.arnFor("run_next"),
    });
    await fakes.sessions.claim("tenant_1", "ses_1", "run_next", { queue: true });
    await endRun(ports, runId, "interrupted", {
      error: { code: "interrupted", message: "A newer message interrupted the run." },
      byRunId: "run_next",
    });
    expect(await fakes.executions.describe(fakes.executions.arnFor("run_next"))).toBe("missing");

    await onExecutionStatus(ports, statusEvent(run, "SUCCEEDED"));
    expect(endpoint.requests).toHaveLength(1);
    expect(JSON.parse(endpoint.requests[0]!.body)).toMatchObject({
      type: "run.interrupted",
      data: { runId, status: "interrupted", error: { code: "interrupted" } },
    });
    expect(await fakes.sessions.runs("tenant_1", "ses_1")).toEqual({ activeRunId: "run_next", waiting: [] });
    expect(await fakes.executions.describe(fakes.executions.arnFor("run_next"))).toBe("RUNNING");
    // What it finished (nothing here) is its turn, so the next run reads the request it follows.
    expect((await fakes.sessions.messages("tenant_1", "ses_1")).map((m) => m.runId)).toEqual([runId, runId]);
  });

  it("an execution that crashed ends its run failed (slot back) and reports it", async () => {
    const { ports, fakes, runId, run, endpoint } = await subscribed();
    await onExecutionStatus(ports, statusEvent(run, "FAILED", { error: "Lambda.Unknown", cause: "Lambda died" }));
    expect(await ports.runs.get(runId)).toMatchObject({ status: "failed", error: { code: "Lambda.Unknown", message: "Lambda died" } });
    expect(await fakes.activeRuns.count("tenant_1")).toBe(0);
    expect(endpoint.bodies().map((b) => b.type)).toEqual(["run.failed"]);
  });

  it("a resumed run that fails again reports its second ending under a new webhook-id", async () => {
    const { ports, runId, run, endpoint } = await subscribed();
    await onExecutionStatus(
      ports,
      statusEvent(run, "FAILED", { error: "Stepwise.ModelUnavailable", cause: "The model could not be reached" }),
    );
    await new Promise((resolve) => setTimeout(resolve, 5)); // the second ending happens at a later millisecond
    expect(await ports.runs.reopen(runId, ["failed"])).toBe(true);
    await onExecutionStatus(ports, statusEvent(run, "FAILED", { error: "Stepwise.ModelUnavailable", cause: "Still unreachable" }));
    const ids = endpoint.requests.map((r) => r.headers["webhook-id"]);
    expect(endpoint.bodies().map((b) => b.type)).toEqual(["run.failed", "run.failed"]);
    expect(new Set(ids).size).toBe(2);
  });

  it("counts the ended execution's state transitions once, for the run's usage", async () => {
    const { ports, fakes, runId, run } = await subscribed();
    fakes.executions.setStatus(runId, "SUCCEEDED");
    fakes.executions.executions.get(run.executionArn)!.transitions = 23;
    await endRun(ports, runId, "succeeded");
    await onExecutionStatus(ports, statusEvent(run, "SUCCEEDED"));
    expect((await ports.runs.get(runId))!.stateTransitions).toBe(23);
  });

  it("a run waiting for a person sends run.awaiting_input listing the interrupt", async () => {
    const { ports, fakes, runId, endpoint } = await subscribed();
    await openInterrupt(ports, {
      interruptId: "int_1",
      runId,
      kind: "ask_user",
      question: "Which city?",
      summary: "The agent asks: Which city?",
    });
    for (const message of fakes.notifyQueue.take()) await onQueueMessage(ports, message);
    expect(endpoint.bodies()).toEqual([
      expect.objectContaining({
        type: "run.awaiting_input",
        data: expect.objectContaining({ interrupts: [{ interruptId: "int_1", kind: "ask_user", summary: "The agent asks: Which city?" }] }),
      }),
    ]);
  });

  it("only the subscribed event types are sent; a run without a webhook sends nothing", async () => {
    const endpoint = receiver.endpoint();
    const { ports, fakes, runId, run } = await withRun(
      { status: "running", webhook: { url: endpoint.url, events: ["run.failed"] } },
      { settings },
    );
    await endRun(ports, runId, "succeeded");
    await onExecutionStatus(ports, statusEvent(run, "SUCCEEDED"));
    expect(endpoint.requests).toHaveLength(0);
    expect(await fakes.webhooks.listDeliveries(runId)).toEqual([]);

    const quiet = await withRun({ status: "running" }, { settings });
    await endRun(quiet.ports, quiet.runId, "succeeded");
    await onExecutionStatus(quiet.ports, statusEvent(quiet.run, "SUCCEEDED"));
    expect(await quiet.fakes.webhooks.listDeliveries(quiet.runId)).toEqual([]);
  });

  it("a receiver that fails gets the same message again later: the retry is queued with its delay, and delivered on the next attempt", async () => {
    const { ports, fakes, runId, run, endpoint } = await subscribed(scripts.failThenSucceed(1, { status: 503 }));
    await endRun(ports, runId, "succeeded");
    await onExecutionStatus(ports, statusEvent(run, "SUCCEEDED"));
    const [retry] = fakes.notifyQueue.sent.splice(0);
    expect(retry).toMatchObject({
      message: { kind: "deliver", runId, attempt: 2, notBefore: expect.any(String) },
      delayMs: expect.any(Number),
    });
    expect(retry!.delayMs).toBeGreaterThan(0);
    await onQueueMessage(ports, { ...retry!.message, notBefore: undefined } as never);
    const id = endpoint.requests[0]!.headers["webhook-id"];
    expect(id).toMatch(new RegExp(`^msg_${runId}_succeeded_`));
    expect(endpoint.requests.map((r) => [r.headers["webhook-id"], r.answered])).toEqual([
      [id, 503],
      [id, 200],
    ]);
    expect((await fakes.webhooks.listDeliveries(runId))[0]).toMatchObject({
      status: "delivered",
      attempts: [{ ok: false, status: 503 }, { ok: true }],
    });
  });

  it("410 Gone disables the endpoint for the tenant: nothing more is sent to it", async () => {
    const { ports, fakes, runId, run, endpoint } = await subscribed(scripts.always(410));
    await endRun(ports, runId, "succeeded");
    await onExecutionStatus(ports, statusEvent(run, "SUCCEEDED"));
    expect(await fakes.webhooks.isDisabled("tenant_1", endpoint.url)).toBe(true);
    expect(fakes.notifyQueue.sent).toEqual([]);
    expect((await fakes.webhooks.listDeliveries(runId))[0]?.status).toBe("disabled");
  });
});
