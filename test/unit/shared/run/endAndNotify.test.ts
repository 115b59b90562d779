import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textStream } from "../../../../shared/agent/deltas.js";
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

  it("leaves a count a read of the ended run already recorded: no second count, no second write", async () => {
    const { ports, fakes, runId, run } = await subscribed();
    fakes.executions.setStatus(runId, "SUCCEEDED");
    fakes.executions.executions.get(run.executionArn)!.transitions = 23;
    await endRun(ports, runId, "succeeded");
    await ports.runs.update(runId, { stateTransitions: 23 });
    const recorded = (await ports.runs.get(runId))!;
    fakes.executions.executions.get(run.executionArn)!.transitions = 99; // what a second count would find
    await onExecutionStatus(ports, statusEvent(run, "SUCCEEDED"));
    const after = (await ports.runs.get(runId))!;
    expect(after.stateTransitions).toBe(23);
    expect(after.updatedAt).toBe(recorded.updatedAt);
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

describe("a model call that waits to be retried (run.waiting_on_model)", () => {
  const retry = { attempt: 1, retries: 2, reason: "HTTP 429 (rate limited)", waitMs: 800 };

  /** The run's model call fails three times in one spell, then a second call waits once: what the notifier is given. */
  async function waitTwice(ports: Awaited<ReturnType<typeof withRun>>["ports"], runId: string) {
    const first = textStream(ports, runId, { agent: "executor", taskId: "t1" });
    first.onRetry(retry);
    first.onRetry({ ...retry, attempt: 2, waitMs: 1600 });
    await first.close();
    const second = textStream(ports, runId, { agent: "summarizer" });
    second.onRetry({ ...retry, reason: "the model could not be reached (ECONNREFUSED)" });
    await second.close();
  }

  it("a subscription that names it gets one signed webhook per waiting spell, with the attempt, reason and wait", async () => {
    const endpoint = receiver.endpoint();
    const { ports, fakes, runId, run } = await withRun(
      { status: "running", webhook: { url: endpoint.url, events: ["run.waiting_on_model", "run.succeeded"] } },
      { settings },
    );
    await waitTwice(ports, runId);
    const messages = fakes.notifyQueue.take();
    // SQS delivers at least once: a message handled twice is still one webhook.
    for (const message of [...messages, ...messages]) await onQueueMessage(ports, message);

    expect(endpoint.requests).toHaveLength(2);
    const secrets = (await fakes.webhooks.secrets("tenant_1")).map((s) => s.secret);
    for (const request of endpoint.requests)
      expect(() => verifyWebhook({ headers: request.headers as Record<string, string>, body: request.body, secrets })).not.toThrow();
    const [first, second] = endpoint.bodies();
    expect(first).toEqual({
      type: "run.waiting_on_model",
      timestamp: expect.any(String),
      data: {
        runId,
        status: "running",
        sessionId: run.sessionId,
        modelWait: { agent: "executor", taskId: "t1", ...retry, retryAt: expect.any(String) },
        links: run.links,
        metadata: {},
      },
    });
    expect(Date.parse(first.data.modelWait.retryAt) - Date.parse(first.timestamp)).toBe(retry.waitMs);
    expect(second.data.modelWait).toMatchObject({
      agent: "summarizer",
      attempt: 1,
      reason: "the model could not be reached (ECONNREFUSED)",
    });
    expect(new Set(endpoint.requests.map((r) => r.headers["webhook-id"])).size).toBe(2);
    // Listed with the run's other deliveries, delivered.
    expect((await fakes.webhooks.listDeliveries(runId)).map((d) => [d.type, d.status])).toEqual([
      ["run.waiting_on_model", "delivered"],
      ["run.waiting_on_model", "delivered"],
    ]);
  });

  it("a subscription without events (today's default) or naming other types gets no progress webhook", async () => {
    for (const events of [undefined, ["run.succeeded", "run.failed"]]) {
      const endpoint = receiver.endpoint();
      const { ports, fakes, runId } = await withRun({ status: "running", webhook: { url: endpoint.url, events } }, { settings });
      await waitTwice(ports, runId);
      // Nothing was queued for it: the notifier would have had nothing to send.
      expect(fakes.notifyQueue.take()).toEqual([]);
      expect(endpoint.requests).toHaveLength(0);
      expect(await fakes.webhooks.listDeliveries(runId)).toEqual([]);
    }
  });

  it("a progress webhook whose receiver fails is retried on the queue like any other, under the same webhook-id", async () => {
    const endpoint = receiver.endpoint(scripts.failThenSucceed(1, { status: 500 }));
    const { ports, fakes, runId } = await withRun(
      { status: "running", webhook: { url: endpoint.url, events: ["run.waiting_on_model"] } },
      { settings },
    );
    const stream = textStream(ports, runId, { agent: "react" });
    stream.onRetry(retry);
    await stream.close();
    for (const message of fakes.notifyQueue.take()) await onQueueMessage(ports, message);
    const [again] = fakes.notifyQueue.take();
    expect(again).toMatchObject({ kind: "deliver", runId, attempt: 2 });
    await onQueueMessage(ports, { ...again!, notBefore: undefined } as never);
    expect(endpoint.requests.map((r) => r.answered)).toEqual([500, 200]);
    expect(endpoint.requests[0]!.headers["webhook-id"]).toBe(endpoint.requests[1]!.headers["webhook-id"]);
    expect((await fakes.webhooks.listDeliveries(runId))[0]).toMatchObject({ type: "run.waiting_on_model", status: "delivered" });
  });

  it("an A2A push config gets a working status update with the retry's message, once per spell, with its token; none once the task ended", async () => {
    const endpoint = receiver.endpoint();
    const { ports, fakes, runId, run } = await withRun({ status: "running" }, { settings });
    const push = await sealPush(fakes.secrets, "tenant_1", { id: "cfg-1", token: "tok", wireVersion: "1.0" });
    await ports.runs.update(runId, { webhook: { url: endpoint.url, a2a: push } });
    await waitTwice(ports, runId);
    const messages = fakes.notifyQueue.take();
    for (const message of messages) await onQueueMessage(ports, message);

    expect(endpoint.requests).toHaveLength(2);
    const secrets = (await fakes.webhooks.secrets("tenant_1")).map((s) => s.secret);
    const [request] = endpoint.requests;
    expect(() => verifyWebhook({ headers: request!.headers as Record<string, string>, body: request!.body, secrets })).not.toThrow();
    expect(request!.headers).toMatchObject({ "x-a2a-notification-token": "tok", "content-type": "application/a2a+json" });
    const { statusUpdate } = JSON.parse(request!.body);
    expect(statusUpdate).toMatchObject({ taskId: runId, contextId: run.sessionId, status: { state: "TASK_STATE_WORKING" } });
    expect(statusUpdate.status.message.parts[0].text).toBe(
      "The executor of t1's model call failed (HTTP 429 (rate limited)): retry 1 of 2 in 0.8 s",
    );
    expect(JSON.parse(endpoint.requests[1]!.body).statusUpdate.status.message.parts[0].text).toMatch(
      /^The summarizer's model call failed \(the model could not be reached \(ECONNREFUSED\)\): retry 1 of 2/,
    );

    // A spell told after the task ended would say it works again: not sent.
    const late = await withRun({ status: "running" }, { settings });
    await late.ports.runs.update(late.runId, { webhook: { url: endpoint.url, a2a: push } });
    const stream = textStream(late.ports, late.runId, { agent: "react" });
    stream.onRetry(retry);
    await stream.close();
    await endRun(late.ports, late.runId, "succeeded");
    for (const message of late.fakes.notifyQueue.take()) await onQueueMessage(late.ports, message);
    expect(endpoint.requests).toHaveLength(2);
  });
});
