import { createHmac, randomUUID } from "node:crypto";
import { Role } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OfflineModel, startOfflineModel } from "../../infra/offlineModel/server.js";
import type { CreateRunResponse } from "../../shared/contracts/responses.js";
import { Behind } from "../support/aws.js";
import { Client, type ErrorBody } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type ModelProxy, startModelProxy } from "../support/modelProxy.js";
import { closedPortUrl, type Endpoint, type ReceivedRequest, Receiver, scripts } from "../support/receiver.js";
import { startTogether } from "../support/startTogether.js";

/**
 * Webhooks over HTTP against the whole local stack, received by a scriptable
 * receiver on loopback: Standard Webhooks signatures checked by an implementation written here
 * (not the library's), the payload, retries with a stable webhook-id and Retry-After, the
 * dead-letter queue, 410 disabling the endpoint, the `events` filter, run.awaiting_input, secret
 * rotation, redelivery, refused URLs, and run.waiting_on_model (with its A2A push) for a model
 * answering 429 first. The model is the offline one behind a proxy that fails the calls of runs
 * marked for it. The local stack retries on the fast schedule
 * (WEBHOOK_RETRY_SCHEDULE=fast: same attempts, delays in ms; SQS delays are whole seconds).
 *
 * One stack; tenants: the main key ("local"), "other", and "rot" (rotation, kept apart so the
 * other tests sign with one secret). Tests poll for states with deadlines; none sleeps.
 */

const SIMPLE = { input: "What is 2+2?", mode: "react" } as const;
const REPORT_INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";
/** Attempts in all before a delivery is dead (the fast schedule keeps the default count). */
const MAX_ATTEMPTS = 10;

let stack: RunningStack;
let receiver: Receiver;
let client: Client;
let other: Client;
let rot: Client;
let behind: Behind;
let model: OfflineModel;
let modelProxy: ModelProxy;
/** Model calls whose messages hold a marker here fail with 429 that many times. */
const busyModel = new Map<string, number>();

/**
 * The dead receivers' runs, submitted first: their ten attempts each, a second or more apart, go on
 * while the other tests run ("a dead receiver" waits for them to settle).
 */
let dead: Promise<{ failing: Endpoint; closedUrl: string; failingRun: string; closedRun: string }>;

beforeAll(async () => {
  model = await startOfflineModel({ latencyMs: 50 });
  modelProxy = await startModelProxy(model.url, (_, request) => {
    const messages = JSON.stringify(request.body.messages);
    const marker = [...busyModel.keys()].find((m) => messages.includes(m) && busyModel.get(m)! > 0);
    if (!marker) return undefined;
    busyModel.set(marker, busyModel.get(marker)! - 1);
    return "429";
  });
  [stack, receiver] = await startTogether(
    startStack({ OPENAI_BASE_URL: modelProxy.url, STEPWISE_MODEL: "stepwise-offline" }, ["other", "rot"]),
    Receiver.start(),
  );
  client = new Client(stack.url, stack.apiKey);
  other = new Client(stack.url, stack.keys.other!);
  rot = new Client(stack.url, stack.keys.rot!);
  behind = new Behind(stack.endpoints!);
  dead = (async () => {
    const failing = receiver.endpoint(scripts.always(500));
    const closedUrl = await closedPortUrl();
    const [failingRun, closedRun] = await Promise.all([submitWithWebhook({ url: failing.url }), submitWithWebhook({ url: closedUrl })]);
    return { failing, closedUrl, failingRun, closedRun };
  })();
  dead.catch(() => undefined); // its failure is reported where it is awaited
});

afterAll(async () => {
  behind?.destroy();
  await Promise.all([stack?.stop(), receiver?.close()]);
  await Promise.all([modelProxy?.close(), model?.close()]);
});

// ---------------------------------------------------------------------------------------------
// Standard Webhooks verification, written from the specification (https://www.standardwebhooks.com):
// signed content is "${webhook-id}.${webhook-timestamp}.${body}", the key is the base64-decoded part
// of "whsec_<base64>", the signature is base64 HMAC-SHA256, and webhook-signature is a space-separated
// list of "v1,<signature>" entries.
// ---------------------------------------------------------------------------------------------

function expectedSignature(secret: string, id: string, timestamp: string, body: string): string {
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  return createHmac("sha256", key).update(`${id}.${timestamp}.${body}`, "utf8").digest("base64");
}

/** For each `v1,` entry of the signature header, in order: the indexes of the secrets it matches. */
function signatureMatches(request: Pick<ReceivedRequest, "headers" | "body">, secrets: string[]): number[][] {
  const id = String(request.headers["webhook-id"]);
  const timestamp = String(request.headers["webhook-timestamp"]);
  const entries = String(request.headers["webhook-signature"]).split(" ");
  expect(
    entries.every((e) => e.startsWith("v1,")),
    `webhook-signature: ${request.headers["webhook-signature"]}`,
  ).toBe(true);
  return entries.map((entry) => {
    const offered = entry.slice(3);
    return secrets.flatMap((secret, index) => (expectedSignature(secret, id, timestamp, request.body) === offered ? [index] : []));
  });
}

/** Headers present and well formed, timestamp fresh, and some v1 signature valid for one of `secrets`. */
function expectValidlySigned(request: ReceivedRequest, secrets: string[]) {
  expect(request.method).toBe("POST");
  expect(request.headers["content-type"]).toMatch(/^application\/json/);
  expect(request.headers["webhook-id"]).toMatch(/^[^\s.]+$/);
  expect(request.headers["webhook-timestamp"]).toMatch(/^\d+$/);
  const skew = Math.abs(Math.floor(request.at / 1000) - Number(request.headers["webhook-timestamp"]));
  expect(skew).toBeLessThanOrEqual(5 * 60);
  expect(
    signatureMatches(request, secrets).some((m) => m.length > 0),
    "no v1 signature verifies",
  ).toBe(true);
}

async function secretsOf(on: Client): Promise<{ secret: string; createdAt: string; expiresAt?: string }[]> {
  const res = await on.request<{ secrets: { secret: string; createdAt: string; expiresAt?: string }[] }>("GET", "/v1/webhook-secrets");
  expect(res.status).toBe(200);
  return res.body.secrets;
}

// --------------------------------------------------------------------------------------------- helpers

interface WebhookLog {
  runId: string;
  webhook: { url: string; events?: string[] } | null;
  deliveries: {
    deliveryId: string;
    runId: string;
    type: string;
    url: string;
    status: "pending" | "delivered" | "dead" | "disabled";
    attempts: { attempt: number; at: string; ok: boolean; status?: number; error?: string; durationMs: number }[];
  }[];
}

async function webhookLog(runId: string, on: Client = client): Promise<WebhookLog> {
  const res = await on.request<WebhookLog>("GET", `/v1/runs/${runId}/webhooks`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Polls the run's delivery log until `done` holds. */
async function waitForLog(
  runId: string,
  done: (log: WebhookLog) => boolean,
  what: string,
  timeoutMs = 30_000,
  on: Client = client,
): Promise<WebhookLog> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await webhookLog(runId, on);
    if (done(log)) return log;
    if (Date.now() > deadline) throw new Error(`run ${runId}: no ${what} after ${timeoutMs} ms; log: ${JSON.stringify(log.deliveries)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls until one delivery of the run has left "pending" (delivered, dead or disabled). */
async function waitForSettled(runId: string, timeoutMs = 30_000, on: Client = client) {
  const log = await waitForLog(runId, (l) => l.deliveries.some((d) => d.status !== "pending"), "settled delivery", timeoutMs, on);
  return { log, delivery: log.deliveries.find((d) => d.status !== "pending")! };
}

async function submitWithWebhook(webhook: { url: string; events?: string[] }, body: Record<string, unknown> = SIMPLE, on: Client = client) {
  const { runId } = await on.submit({ ...body, webhook });
  return runId;
}

/** Polls DescribeExecution until the run's execution is no longer RUNNING (its status change is then queued). */
async function waitForExecutionEnd(runId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const execution = await behind.execution(runId);
    if (execution.status !== "RUNNING") return execution;
    if (Date.now() > deadline) throw new Error(`execution of ${runId} still RUNNING after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// --------------------------------------------------------------------------------------------- tests

describe("a delivered webhook", () => {
  let endpoint: Endpoint;
  let runId: string;
  let run: any;
  let request: ReceivedRequest;

  beforeAll(async () => {
    endpoint = receiver.endpoint(scripts.ok());
    runId = await submitWithWebhook({ url: endpoint.url }, { ...SIMPLE, metadata: { order: "42" } });
    ({ run } = await client.waitForEnd(runId));
    expect(run.status).toBe("succeeded");
    [request] = await endpoint.waitForRequests(1);
  });

  it("is signed per Standard Webhooks with the tenant's secret (checked independently)", async () => {
    const secrets = (await secretsOf(client)).map((s) => s.secret);
    expect(secrets).toHaveLength(1);
    expectValidlySigned(request, secrets);
    // One active secret: one signature, and it is that secret's.
    expect(signatureMatches(request, secrets)).toEqual([[0]]);
    // The verifier is not a rubber stamp: a changed body, id or timestamp, or another secret, fails.
    expect(signatureMatches({ ...request, body: request.body.replace("succeeded", "failed") }, secrets)).toEqual([[]]);
    expect(signatureMatches({ ...request, headers: { ...request.headers, "webhook-id": "msg_other" } }, secrets)).toEqual([[]]);
    expect(signatureMatches({ ...request, headers: { ...request.headers, "webhook-timestamp": "1" } }, secrets)).toEqual([[]]);
    expect(
      signatureMatches(
        request,
        (await secretsOf(other)).map((s) => s.secret),
      ),
    ).toEqual([[]]);
  });

  it("carries {type, timestamp, data} saying run.succeeded, with links.self to the run", async () => {
    const payload = JSON.parse(request.body);
    expect(Object.keys(payload).sort()).toEqual(["data", "timestamp", "type"]);
    expect(payload.type).toBe("run.succeeded");
    expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp);
    expect(payload.data).toMatchObject({
      runId,
      status: "succeeded",
      sessionId: run.sessionId,
      result: run.result,
      metadata: { order: "42" },
      links: {
        self: `${stack.url}/v1/runs/${runId}`,
        events: `${stack.url}/v1/runs/${runId}/events`,
        stream: `${stack.url}/v1/runs/${runId}/stream`,
      },
    });
    expect(payload.data.result).toEqual(expect.stringContaining("4"));
    // links.self is the run, readable with the API key.
    const self = await fetch(payload.data.links.self, { headers: { authorization: `Bearer ${stack.apiKey}` } });
    expect(self.status).toBe(200);
    expect(((await self.json()) as { runId: string }).runId).toBe(runId);
  });

  it("is in the run's delivery log: one attempt, delivered, webhook-id = deliveryId", async () => {
    const log = await waitForLog(runId, (l) => l.deliveries[0]?.status === "delivered", "delivered status");
    expect(log.webhook).toEqual({ url: endpoint.url });
    expect(log.deliveries).toHaveLength(1);
    const [delivery] = log.deliveries;
    expect(delivery).toMatchObject({
      deliveryId: request.headers["webhook-id"],
      runId,
      type: "run.succeeded",
      url: endpoint.url,
      status: "delivered",
    });
    expect(delivery!.attempts).toEqual([expect.objectContaining({ attempt: 1, ok: true, status: 200 })]);
    expect(delivery).not.toHaveProperty("body");
    expect(endpoint.requests).toHaveLength(1);
  });

  it("redeliver sends the same message again with the same webhook-id, signed afresh", async () => {
    const deliveryId = String(request.headers["webhook-id"]);
    const res = await client.request("POST", `/v1/runs/${runId}/webhooks/${deliveryId}/redeliver`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toEqual({ deliveryId, status: "pending" });

    const [, again] = await endpoint.waitForRequests(2);
    expect(again!.headers["webhook-id"]).toBe(deliveryId);
    expect(again!.body).toBe(request.body);
    expect(Number(again!.headers["webhook-timestamp"])).toBeGreaterThanOrEqual(Number(request.headers["webhook-timestamp"]));
    expectValidlySigned(
      again!,
      (await secretsOf(client)).map((s) => s.secret),
    );

    const log = await waitForLog(
      runId,
      (l) => l.deliveries[0]?.status === "delivered" && l.deliveries[0].attempts.length === 2,
      "second attempt",
    );
    expect(log.deliveries).toHaveLength(1);
    expect(log.deliveries[0]!.attempts.map((a) => [a.attempt, a.ok, a.status])).toEqual([
      [1, true, 200],
      [2, true, 200],
    ]);
    expect(endpoint.requests).toHaveLength(2);
  });

  it("redeliver of an unknown delivery is 404, of another tenant's run 404", async () => {
    const unknown = await client.request<ErrorBody>("POST", `/v1/runs/${runId}/webhooks/msg_nope/redeliver`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: "not_found", message: expect.any(String) });
    const foreign = await other.request("POST", `/v1/runs/${runId}/webhooks/${request.headers["webhook-id"]}/redeliver`);
    expect(foreign.status).toBe(404);
    expect((await other.request("GET", `/v1/runs/${runId}/webhooks`)).status).toBe(404);
  });
});

describe("retries", () => {
  it("a receiver failing twice (503, Retry-After: 1) gets the same webhook-id three times; the log shows 3 attempts, delivered", async () => {
    const endpoint = receiver.endpoint(scripts.failThenSucceed(2, { status: 503, headers: { "retry-after": "1" }, body: "busy" }));
    const runId = await submitWithWebhook({ url: endpoint.url });
    const requests = await endpoint.waitForRequests(3, 45_000);
    const secrets = (await secretsOf(client)).map((s) => s.secret);

    const ids = requests.map((r) => r.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(1);
    for (const r of requests) expectValidlySigned(r, secrets);
    // The same message each time, byte for byte; only the timestamp (and so the signature) is new.
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(requests.map((r) => r.answered)).toEqual([503, 503, 200]);
    // Retry-After: 1 was honoured: no retry came sooner than a second after the refusal.
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(requests[2]!.at - requests[1]!.at).toBeGreaterThanOrEqual(1000);

    const log = await waitForLog(runId, (l) => l.deliveries[0]?.status === "delivered", "delivered status");
    expect(log.deliveries).toHaveLength(1);
    const [delivery] = log.deliveries;
    expect(delivery!.deliveryId).toBe(ids[0]);
    expect(delivery!.attempts.map((a) => [a.attempt, a.ok, a.status])).toEqual([
      [1, false, 503],
      [2, false, 503],
      [3, true, 200],
    ]);
    expect(endpoint.requests).toHaveLength(3);
  }, 60_000);
});

describe("410 Gone", () => {
  it("disables the endpoint: status disabled after one attempt, and a later run's webhook to it is not attempted", async () => {
    const gone = receiver.endpoint(scripts.always(410));
    const first = await submitWithWebhook({ url: gone.url });
    const { delivery } = await waitForSettled(first);
    expect(delivery.status).toBe("disabled");
    expect(delivery.attempts.map((a) => [a.attempt, a.ok, a.status])).toEqual([[1, false, 410]]);
    expect(gone.requests).toHaveLength(1);

    const second = await submitWithWebhook({ url: gone.url });
    const later = await waitForSettled(second);
    expect(later.delivery.status).toBe("disabled");
    expect(later.delivery.attempts).toHaveLength(1);
    expect(later.delivery.attempts[0]).toMatchObject({ ok: false, error: expect.stringMatching(/disabled/) });
    expect(later.delivery.attempts[0]!.status).toBeUndefined();
    // Zero HTTP requests for the second run: the receiver still has only the first.
    expect(gone.requests).toHaveLength(1);
    expect(gone.requests.every((r) => JSON.parse(r.body).data.runId === first)).toBe(true);
    // A disabled endpoint is not a failure to dead-letter.
    expect((await behind.deadLetters()).filter((l) => l.runId === first || l.runId === second)).toEqual([]);
  });

  it("disabling is per tenant: another tenant's webhook to the same URL is still attempted", async () => {
    const gone = receiver.endpoint(scripts.always(410));
    await waitForSettled(await submitWithWebhook({ url: gone.url }));
    const runId = await submitWithWebhook({ url: gone.url }, SIMPLE, other);
    const { delivery } = await waitForSettled(runId, 30_000, other);
    expect(delivery.attempts.map((a) => a.status)).toEqual([410]);
    expect(gone.requests).toHaveLength(2);
  });
});

describe("the events filter", () => {
  it("a webhook subscribed only to run.failed gets nothing for a succeeded run", async () => {
    const onlyFailed = receiver.endpoint(scripts.ok());
    const runId = await submitWithWebhook({ url: onlyFailed.url, events: ["run.failed"] });
    const { run } = await client.waitForEnd(runId);
    expect(run.status).toBe("succeeded");
    // The execution has ended, so its status change is on the notify queue. A barrier: a run
    // submitted after that, with a webhook for all events, is notified through the same queue,
    // behind it; once that webhook arrives, the filtered one has had its turn.
    expect((await waitForExecutionEnd(runId)).status).toBe("SUCCEEDED");
    const barrier = receiver.endpoint(scripts.ok());
    const barrierRun = await submitWithWebhook({ url: barrier.url });
    await barrier.waitForRequest((r) => JSON.parse(r.body).data.runId === barrierRun);

    expect(onlyFailed.requests).toEqual([]);
    const log = await webhookLog(runId);
    expect(log.webhook).toEqual({ url: onlyFailed.url, events: ["run.failed"] });
    expect(log.deliveries).toEqual([]);
  });

  it("an unknown event type in the filter is a 400", async () => {
    const res = await client.request<ErrorBody>("POST", "/v1/runs", {
      ...SIMPLE,
      webhook: { url: receiver.endpoint().url, events: ["run.exploded"] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/events/);
  });
});

describe("run.awaiting_input", () => {
  it("a run waiting for tool approval sends run.awaiting_input listing the interrupt; the end sends run.succeeded", async () => {
    const endpoint = receiver.endpoint(scripts.ok());
    const runId = await submitWithWebhook({ url: endpoint.url }, { input: REPORT_INPUT, mode: "plan_solve", approval: { tools: "write" } });
    const { pending } = await client.waitForPending(runId, 1);
    const interrupt = pending[0];
    expect(interrupt.kind).toBe("tool_approval");

    const waiting = await endpoint.waitForRequest((r) => JSON.parse(r.body).type === "run.awaiting_input");
    const secrets = (await secretsOf(client)).map((s) => s.secret);
    expectValidlySigned(waiting, secrets);
    const payload = JSON.parse(waiting.body);
    expect(payload.data).toMatchObject({ runId, status: "awaiting_input", links: { self: `${stack.url}/v1/runs/${runId}` } });
    expect(payload.data.interrupts).toEqual([{ interruptId: interrupt.interruptId, kind: "tool_approval", summary: expect.any(String) }]);
    expect(payload.data.interrupts[0].summary).toContain("write_artifact");
    expect(payload.data.result).toBeUndefined();

    expect((await client.decide(runId, interrupt.interruptId, { decision: "approve" })).status).toBe(202);
    const { run } = await client.waitForEnd(runId);
    expect(run.status).toBe("succeeded");
    const done = await endpoint.waitForRequest((r) => JSON.parse(r.body).type === "run.succeeded");
    expectValidlySigned(done, secrets);
    expect(done.headers["webhook-id"]).not.toBe(waiting.headers["webhook-id"]);

    const log = await waitForLog(
      runId,
      (l) => l.deliveries.length === 2 && l.deliveries.every((d) => d.status === "delivered"),
      "two delivered messages",
    );
    expect(log.deliveries.map((d) => d.type).sort()).toEqual(["run.awaiting_input", "run.succeeded"]);
    expect(endpoint.requests).toHaveLength(2);
  }, 60_000);
});

describe("run.waiting_on_model", () => {
  it("a subscription naming it gets one signed progress webhook per waiting spell (attempt, reason, wait), listed with the run's deliveries", async () => {
    const marker = "(busy model: webhook)";
    busyModel.set(marker, 2); // the react agent's first call: 429, 429, then its answer
    const endpoint = receiver.endpoint(scripts.ok());
    const runId = await submitWithWebhook(
      { url: endpoint.url, events: ["run.waiting_on_model", "run.succeeded"] },
      { input: `What is 2+2? ${marker}`, mode: "react" },
    );
    const { run, events } = await client.waitForEnd(runId, 100_000);
    expect(run.status).toBe("succeeded");
    expect(events.filter((e) => e.type === "model.retrying").map((e) => (e.data as { attempt: number }).attempt)).toEqual([1, 2]);

    await endpoint.waitForRequest((r) => JSON.parse(r.body).type === "run.succeeded");
    const log = await waitForLog(
      runId,
      (l) => l.deliveries.length === 2 && l.deliveries.every((d) => d.status === "delivered"),
      "two delivered messages",
    );
    expect(log.deliveries.map((d) => d.type).sort()).toEqual(["run.succeeded", "run.waiting_on_model"]);
    // Two retries, one waiting spell: one progress webhook.
    const progress = endpoint.requests.filter((r) => JSON.parse(r.body).type === "run.waiting_on_model");
    expect(progress).toHaveLength(1);
    // Verified with the Standard Webhooks library, as a receiver would.
    const [{ secret }] = await secretsOf(client);
    const verified = new Webhook(secret!).verify(progress[0]!.body, progress[0]!.headers as Record<string, string>) as any;
    expect(verified).toMatchObject({
      type: "run.waiting_on_model",
      data: {
        runId,
        status: "running",
        modelWait: { agent: "react", attempt: 1, retries: 2, reason: expect.stringMatching(/429/), waitMs: expect.any(Number) },
        links: { self: `${stack.url}/v1/runs/${runId}` },
      },
    });
    expect(Date.parse(verified.data.modelWait.retryAt) - Date.parse(verified.timestamp)).toBe(verified.data.modelWait.waitMs);
    expect(log.deliveries.find((d) => d.type === "run.waiting_on_model")!.deliveryId).toBe(progress[0]!.headers["webhook-id"]);
  }, 120_000);

  it("an A2A push config gets a working status update with the retry's message, then the completed task", async () => {
    const marker = "(busy model: a2a)";
    busyModel.set(marker, 1);
    const endpoint = receiver.endpoint(scripts.ok(), "a2a");
    const fetchImpl: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${stack.apiKey}`);
      return fetch(input, { ...init, headers });
    };
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    });
    const a2a = await new ClientFactory(options).createFromUrl(stack.url);
    const sent = await a2a.sendMessage({
      tenant: "",
      message: {
        messageId: randomUUID(),
        contextId: "",
        taskId: "",
        role: Role.ROLE_USER,
        parts: [{ content: { $case: "text", value: `What is 2+2? ${marker}` }, mediaType: "text/plain", filename: "", metadata: {} }],
        metadata: {},
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: {
        acceptedOutputModes: [],
        returnImmediately: true,
        taskPushNotificationConfig: { tenant: "", id: "", taskId: "", url: endpoint.url, token: "tok-wait", authentication: undefined },
      },
      metadata: { mode: "react" },
    });
    const taskId = "id" in sent ? sent.id : "";
    expect(taskId).toMatch(/^run_/);

    const done = await endpoint.waitForRequest((r) => JSON.parse(r.body).task?.status?.state === "TASK_STATE_COMPLETED", 120_000);
    const updates = endpoint.requests.filter((r) => JSON.parse(r.body).statusUpdate);
    expect(updates).toHaveLength(1);
    const [update] = updates;
    const [{ secret }] = await secretsOf(client);
    for (const request of [update!, done]) new Webhook(secret!).verify(request.body, request.headers as Record<string, string>);
    expect(update!.headers).toMatchObject({ "x-a2a-notification-token": "tok-wait", "content-type": "application/a2a+json" });
    const { statusUpdate } = JSON.parse(update!.body);
    expect(statusUpdate).toMatchObject({ taskId, status: { state: "TASK_STATE_WORKING" } });
    expect(statusUpdate.status.message.parts[0].text).toMatch(/^The react's model call failed \(.*429.*\): retry 1 of 2 in \d+\.\d s$/);
    expect(update!.n).toBeLessThan(done.n);
  }, 120_000);
});

describe("secret rotation", () => {
  it("after rotate, a delivery carries two v1 signatures: one valid for the old secret, one for the new", async () => {
    const before = await secretsOf(rot);
    expect(before).toHaveLength(1);
    const old = before[0]!.secret;
    const mainBefore = await secretsOf(client);

    const rotated = await rot.request<{ secrets: { secret: string; expiresAt?: string }[] }>("POST", "/v1/webhook-secrets/rotate");
    expect(rotated.status).toBe(200);
    const secrets: { secret: string; expiresAt?: string }[] = rotated.body.secrets;
    expect(secrets).toHaveLength(2);
    const fresh = secrets.find((s) => s.secret !== old)!;
    expect(fresh.secret).toMatch(/^whsec_/);
    expect(fresh.expiresAt).toBeUndefined();
    // The old secret keeps signing for an overlap (24 h by default), then expires.
    const oldEntry = secrets.find((s) => s.secret === old)!;
    expect(Date.parse(oldEntry.expiresAt!)).toBeGreaterThan(Date.now() + 3_600_000);
    expect((await secretsOf(rot)).map((s) => s.secret).sort()).toEqual([old, fresh.secret].sort());
    // Another tenant's secrets did not change.
    expect(await secretsOf(client)).toEqual(mainBefore);

    const endpoint = receiver.endpoint(scripts.ok());
    await submitWithWebhook({ url: endpoint.url }, SIMPLE, rot);
    const [request] = await endpoint.waitForRequests(1);
    const matches = signatureMatches(request!, [old, fresh.secret]);
    expect(matches).toHaveLength(2);
    // Each signature is valid for exactly one secret, and together they cover both.
    expect(matches.every((m) => m.length === 1)).toBe(true);
    expect(matches.map((m) => m[0]).sort()).toEqual([0, 1]);
  });
});

describe("refused webhook URLs", () => {
  /** The run the test starts to show its key unclaimed: it runs on while the next tests go, and ends. */
  const started: string[] = [];
  afterAll(async () => {
    const ended = await Promise.all(started.map((runId) => client.waitForEnd(runId)));
    expect(ended.map(({ run }) => run.status)).toEqual(started.map(() => "succeeded"));
  });

  // One refused URL through the whole stack; every kind (scheme, not a URL, credentials, metadata,
  // link-local, IPv4-mapped, private) is refused the same way on the route in test/unit/functions/api/webhookUrls.test.ts.
  it("the cloud metadata service's credentials URL → 400 at submit, and no run is created", async () => {
    const url = "http://169.254.169.254/latest/meta-data/iam/security-credentials/";
    const before = await behind.runIds();
    const key = `refused-${Math.random().toString(36).slice(2)}`;
    const res = await client.request<ErrorBody>("POST", "/v1/runs", { ...SIMPLE, webhook: { url } }, { "idempotency-key": key });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatchObject({
      code: expect.stringMatching(/^(invalid_webhook_url|forbidden_webhook_address)$/),
      message: expect.any(String),
    });
    expect(res.body.error.message.length).toBeGreaterThan(10);
    expect(await behind.runIds()).toEqual(before);
    // The Idempotency-Key was not claimed either: a different body with it is a new run, not a 409.
    const retried = await client.request<CreateRunResponse>(
      "POST",
      "/v1/runs",
      { ...SIMPLE, input: "What is 3+3?" },
      { "idempotency-key": key },
    );
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect(await behind.runIds()).toEqual([...before, retried.body.runId].sort());
    started.push(retried.body.runId);
  });
});

describe("a dead receiver", () => {
  let failing: Endpoint;
  let closedUrl: string;
  let failingRun: string;
  let closedRun: string;
  let failingLog: WebhookLog;
  let closedLog: WebhookLog;

  beforeAll(async () => {
    ({ failing, closedUrl, failingRun, closedRun } = await dead);
    // Ten attempts, each retry at least a second after the last (SQS delays are whole seconds).
    [{ log: failingLog }, { log: closedLog }] = await Promise.all([waitForSettled(failingRun, 60_000), waitForSettled(closedRun, 60_000)]);
  }, 300_000);

  it("always 500: every attempt is listed, status dead, the receiver saw the same webhook-id each time", () => {
    expect(failingLog.deliveries).toHaveLength(1);
    const [delivery] = failingLog.deliveries;
    expect(delivery!.status).toBe("dead");
    expect(delivery!.attempts.map((a) => a.attempt)).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, i) => i + 1));
    expect(delivery!.attempts.every((a) => !a.ok && a.status === 500)).toBe(true);
    expect(failing.requests).toHaveLength(MAX_ATTEMPTS);
    expect(new Set(failing.requests.map((r) => r.headers["webhook-id"]))).toEqual(new Set([delivery!.deliveryId]));
  });

  it("a closed port: every attempt is listed with the connection error, status dead", () => {
    expect(closedLog.deliveries).toHaveLength(1);
    const [delivery] = closedLog.deliveries;
    expect(delivery!.status).toBe("dead");
    expect(delivery!.url).toBe(closedUrl);
    expect(delivery!.attempts.map((a) => a.attempt)).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, i) => i + 1));
    for (const a of delivery!.attempts) {
      expect(a.ok).toBe(false);
      expect(a.status).toBeUndefined();
      expect(a.error).toMatch(/ECONNREFUSED/);
    }
  });

  it("both end in the dead-letter queue (read with the AWS SDK), naming the run and the delivery", async () => {
    const expected = [
      { runId: failingRun, deliveryId: failingLog.deliveries[0]!.deliveryId },
      { runId: closedRun, deliveryId: closedLog.deliveries[0]!.deliveryId },
    ];
    const deadline = Date.now() + 15_000;
    let letters: any[] = [];
    for (;;) {
      letters = await behind.deadLetters();
      if (expected.every((e) => letters.some((l) => l.runId === e.runId))) break;
      if (Date.now() > deadline) throw new Error(`dead-letter queue holds ${JSON.stringify(letters)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const { runId, deliveryId } of expected) {
      const mine = letters.filter((l) => l.runId === runId);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        kind: "deliver",
        runId,
        deliveryId,
        attempt: MAX_ATTEMPTS,
        reason: expect.stringContaining(`${MAX_ATTEMPTS} attempts`),
      });
    }
    // Nothing more was attempted after the message was dead-lettered.
    expect(failing.requests).toHaveLength(MAX_ATTEMPTS);
  });
});
