import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../../../shared/contracts/run.js";
import { handleA2A } from "../../../../shared/protocols/a2aServer.js";
import { onExecutionStatus } from "../../../../shared/run/endAndNotify.js";
import { endRun } from "../../../../shared/run/lifecycle.js";
import { withRun } from "../../../support/memoryRun.js";
import { Receiver, scripts } from "../../../support/receiver.js";

/**
 * An A2A push config's token and credentials are the receiver's secrets: kept sealed on the run
 * record, opened only to send the push and to show the owner its own config (A2A lets it read them back).
 */

let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(async () => receiver?.close());

const settings = { webhooks: { policy: { allowLoopback: true, allowHttp: true } } };

async function waitingRun() {
  const fixture = await withRun(
    { status: "running", links: { self: "https://api.example.com/v1/runs/run_x", events: "e", stream: "s" } },
    { settings },
  );
  const { ports, run } = fixture;
  /** One A2A 1.0 JSON-RPC call as the run's owner, over the in-memory ports. */
  const call = async (method: string, params: Record<string, unknown>, tenantId = run.tenantId) => {
    const response = await handleA2A(
      new Request("http://stream.test/a2a", {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      }),
      {
        services: ports,
        tenantId,
        links: { api: "https://api.example.com", stream: "http://stream.test", console: false },
        streaming: false,
        waitMs: 0,
        version: "test",
      },
    );
    return (await response.json()) as { result?: Record<string, unknown>; error?: { message: string } };
  };
  return { ...fixture, call };
}

const ended = (run: RunRecord) => ({
  "detail-type": "Step Functions Execution Status Change" as const,
  source: "aws.states" as const,
  detail: { executionArn: run.executionArn, stateMachineArn: "arn:sm", name: run.runId, status: "SUCCEEDED" as const },
});

describe("A2A push secrets at rest", () => {
  it("the record holds neither token nor credentials; the owner reads them back; the push carries the credentials", async () => {
    const { ports, runId, run, call } = await waitingRun();
    const endpoint = receiver.endpoint(scripts.ok());
    const config = {
      taskId: runId,
      id: "cfg-1",
      url: endpoint.url,
      token: "tok-secret-1",
      authentication: { scheme: "Bearer", credentials: "cred-secret-1" },
    };
    const set = await call("CreateTaskPushNotificationConfig", config);
    expect(set.error).toBeUndefined();
    expect(set.result).toMatchObject({
      id: "cfg-1",
      token: "tok-secret-1",
      authentication: { scheme: "Bearer", credentials: "cred-secret-1" },
    });

    const stored = JSON.stringify(await ports.runs.get(runId));
    expect(stored).toContain("cfg-1");
    expect(stored).not.toContain("tok-secret-1");
    expect(stored).not.toContain("cred-secret-1");

    const got = await call("GetTaskPushNotificationConfig", { taskId: runId, id: "cfg-1" });
    expect(got.result).toMatchObject({
      id: "cfg-1",
      url: endpoint.url,
      token: "tok-secret-1",
      authentication: { scheme: "Bearer", credentials: "cred-secret-1" },
    });
    const listed = await call("ListTaskPushNotificationConfigs", { taskId: runId });
    expect(listed.result).toMatchObject({ configs: [{ id: "cfg-1", token: "tok-secret-1" }] });

    await ports.runs.update(runId, { result: "391" });
    await endRun(ports, runId, "succeeded");
    await onExecutionStatus(ports, ended(run));
    expect(endpoint.requests).toHaveLength(1);
    expect(endpoint.requests[0]!.headers).toMatchObject({ authorization: "Bearer cred-secret-1" });
    expect(endpoint.requests[0]!.body).not.toContain("secret-1");
  });

  it("a token alone goes out as the A2A notification token header", async () => {
    const { ports, runId, run, call } = await waitingRun();
    const endpoint = receiver.endpoint(scripts.ok());
    const set = await call("CreateTaskPushNotificationConfig", { taskId: runId, id: "cfg-2", url: endpoint.url, token: "tok-secret-2" });
    expect(set.error).toBeUndefined();
    expect(JSON.stringify(await ports.runs.get(runId))).not.toContain("tok-secret-2");

    await endRun(ports, runId, "succeeded");
    await onExecutionStatus(ports, ended(run));
    expect(endpoint.requests).toHaveLength(1);
    expect(endpoint.requests[0]!.headers).toMatchObject({ "x-a2a-notification-token": "tok-secret-2" });
    expect(endpoint.requests[0]!.headers.authorization).toBeUndefined();
  });

  it("a sealed token opens only for its own tenant and config", async () => {
    const { ports, fakes, runId, call } = await waitingRun();
    await call("CreateTaskPushNotificationConfig", {
      taskId: runId,
      id: "cfg-3",
      url: receiver.endpoint(scripts.ok()).url,
      token: "tok-3",
    });
    const sealed = (await ports.runs.get(runId))!.webhook!.a2a!.token!;
    if (typeof sealed === "string") throw new Error("the token was kept in the clear");
    await expect(fakes.secrets.open(sealed, { purpose: "a2a-push-config", tenantId: "tenant_2", config: "cfg-3" })).rejects.toThrow();
    await expect(fakes.secrets.open(sealed, { purpose: "a2a-push-config", tenantId: "tenant_1", config: "cfg-3" })).resolves.toBe("tok-3");
  });

  it("a record written before tokens were sealed still pushes with its plain token", async () => {
    const endpoint = receiver.endpoint(scripts.ok());
    const { ports, runId, run } = await withRun(
      {
        status: "running",
        links: { self: "https://api.example.com/v1/runs/run_x", events: "e", stream: "s" },
        webhook: { url: endpoint.url, a2a: { id: "cfg-old", token: "tok-old", wireVersion: "1.0" } },
      },
      { settings },
    );
    await endRun(ports, runId, "succeeded");
    await onExecutionStatus(ports, ended(run));
    expect(endpoint.requests).toHaveLength(1);
    expect(endpoint.requests[0]!.headers).toMatchObject({ "x-a2a-notification-token": "tok-old" });
  });
});
