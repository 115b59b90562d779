import { randomUUID } from "node:crypto";
import { type Message, type Part, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FileList, RunList, RunView } from "../../shared/contracts/responses.js";
import { Client as ApiClient } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { Receiver } from "../support/receiver.js";
import { startTogether } from "../support/startTogether.js";

/**
 * Stepwise as an A2A agent, driven by the official SDK's client (`@a2a-js/sdk/client`, A2A 1.0
 * over JSON-RPC) against the whole local stack: the agent card, a message to its answer, a stream
 * followed to completion with the answer and the report as artifacts, an approval answered by a
 * reply on the input-required task, cancel, resubscribe, push notifications verified with the
 * Standard Webhooks library, and bad input of every kind answered with JSON-RPC errors that change
 * nothing.
 */

const REPORT_INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";
const LONG = 170_000;

let stack: RunningStack;
let receiver: Receiver;

beforeAll(async () => {
  [stack, receiver] = await startTogether(startStack({ INTERRUPT_TIMEOUT_SECONDS: "3600" }, ["other"]), Receiver.start());
}, 300_000);

afterAll(async () => {
  await Promise.all([stack?.stop(), receiver?.close()]);
});

/** fetch with the API key as the bearer token, as the card's security scheme says. */
const withKey =
  (key: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };

async function connect(key = stack.apiKey): Promise<Client> {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: withKey(key) })],
  });
  return new ClientFactory(options).createFromUrl(stack.url);
}

const text = (value: string): Part => ({ content: { $case: "text", value }, mediaType: "text/plain", filename: "", metadata: {} });

function message(parts: Part[], fields: Partial<Message> = {}): Message {
  return {
    messageId: randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts,
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
    ...fields,
  };
}

function request(
  msg: Message,
  options: { metadata?: Record<string, unknown>; returnImmediately?: boolean; push?: { url: string; token?: string } } = {},
) {
  return {
    tenant: "",
    message: msg,
    configuration: {
      acceptedOutputModes: [],
      returnImmediately: options.returnImmediately ?? false,
      taskPushNotificationConfig: options.push
        ? { tenant: "", id: "", taskId: "", url: options.push.url, token: options.push.token ?? "", authentication: undefined }
        : undefined,
    },
    metadata: options.metadata ?? {},
  };
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The task's state after each event of a stream: the task's own first, then each status update's. */
const statesOf = (events: StreamResponse[]) =>
  events.flatMap((e) =>
    e.payload?.$case === "task"
      ? [e.payload.value.status!.state]
      : e.payload?.$case === "statusUpdate"
        ? [e.payload.value.status!.state]
        : [],
  );

const partText = (parts: Part[]) => parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const answerOf = (task: Task) => partText(task.artifacts.find((a) => a.artifactId === "answer")?.parts ?? []);

/** Follows a task with resubscribe until it leaves the given states (a stream may end before: the call's time is up). */
async function waitFor(client: Client, taskId: string, done: (task: Task) => boolean): Promise<Task> {
  const deadline = Date.now() + LONG;
  for (;;) {
    const task = await client.getTask({ tenant: "", id: taskId });
    if (done(task) || Date.now() > deadline) return task;
    await collect(client.resubscribeTask({ tenant: "", id: taskId }));
  }
}

describe("A2A agent", { timeout: LONG }, () => {
  it("serves its card: the JSON-RPC endpoint, the run modes as skills, streaming and push notifications, the bearer scheme", async () => {
    const client = await connect();
    const card = await client.getAgentCard();
    expect(card.name).toBe("Stepwise");
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${stack.url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" });
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
    expect(card.skills.map((s) => s.id)).toEqual(["auto", "react", "plan_solve"]);
    expect(card.securitySchemes.bearer?.scheme).toMatchObject({ $case: "httpAuthSecurityScheme", value: { scheme: "Bearer" } });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
  });

  it("message/send waits for the answer: the completed task carries it as an artifact, in the session its context names", async () => {
    const client = await connect();
    const task = (await client.sendMessage(request(message([text("Compute 2+2")]), { metadata: { mode: "react" } }))) as Task;
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.id).toMatch(/^run_/);
    expect(answerOf(task)).toContain("4");
    const run = (await new ApiClient(stack.url, stack.apiKey).request<RunView>("GET", `/v1/runs/${task.id}`)).body;
    expect(run).toMatchObject({ runId: task.id, sessionId: task.contextId, status: "succeeded", requestedMode: "react" });
  });

  it("message/stream follows a plan_solve run to completion: states in order, then the answer and the report as artifacts", async () => {
    const client = await connect();
    const events = await collect(client.sendMessageStream(request(message([text(REPORT_INPUT)]), { metadata: { mode: "plan_solve" } })));
    expect(events[0]!.payload?.$case).toBe("task");
    const states = statesOf(events);
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(states).toContain(TaskState.TASK_STATE_WORKING);
    expect(states).toEqual([...states].sort((a, b) => order(a) - order(b)));
    // While it works, a status update for each step of its log: the plan, tasks, tool calls.
    const progress = events.flatMap((e) =>
      e.payload?.$case === "statusUpdate" && e.payload.value.status!.message ? [partText(e.payload.value.status!.message.parts)] : [],
    );
    expect(progress).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Plan: /),
        expect.stringMatching(/^Started s1\.t1: /),
        expect.stringMatching(/^Finished s1\.t1: /),
        "Calling write_artifact",
      ]),
    );
    const artifacts = events.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [e.payload.value.artifact!] : []));
    expect(artifacts.map((a) => a.name)).toEqual(["answer", "report.md"]);
    expect(partText(artifacts[0]!.parts)).toContain("391");
    const taskId = (events[0]!.payload!.value as Task).id;
    expect(artifacts[1]!.parts[0]).toMatchObject({
      content: { $case: "url", value: `${stack.url}/v1/runs/${taskId}/files/report.md` },
      filename: "report.md",
    });
    // The last status update comes after the artifacts, and the task reads the same afterwards.
    expect(events.at(-1)!.payload?.$case).toBe("statusUpdate");
    const task = await client.getTask({ tenant: "", id: taskId });
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts.map((a) => a.name)).toEqual(["answer", "report.md"]);
  });

  it("a paused write is input-required with the approval as the status message; a reply 'approve' on the task resumes it to completion", async () => {
    const client = await connect();
    const first = await collect(
      client.sendMessageStream(request(message([text(REPORT_INPUT)]), { metadata: { mode: "plan_solve", approval: { tools: "write" } } })),
    );
    const paused = first.at(-1)!.payload;
    expect(paused?.$case).toBe("statusUpdate");
    const status = (paused!.value as { status: Task["status"]; taskId: string }).status!;
    expect(status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(partText(status.message!.parts)).toContain("write_artifact");
    expect(partText(status.message!.parts)).toContain("approve");
    const taskId = (paused!.value as { taskId: string }).taskId;

    // An unreadable reply is refused and decides nothing.
    await expect(client.sendMessage(request(message([text("maybe later")], { taskId })))).rejects.toThrow(/approve/);
    expect((await client.getTask({ tenant: "", id: taskId })).status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    const rest = await collect(client.sendMessageStream(request(message([text("approve")], { taskId }))));
    expect(rest[0]!.payload?.$case).toBe("task");
    expect(statesOf(rest).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    const task = await client.getTask({ tenant: "", id: taskId });
    expect(task.artifacts.map((a) => a.name)).toEqual(["answer", "report.md"]);
    const run = (await new ApiClient(stack.url, stack.apiKey).request<RunView>("GET", `/v1/runs/${taskId}`)).body;
    expect(run.interrupts).toMatchObject([{ kind: "tool_approval", status: "resolved", resolution: { decision: "approve" } }]);
  });

  it("a question of the agent is input-required with the question; the reply's text is the answer the run goes on with", async () => {
    const client = await connect();
    const waiting = (await client.sendMessage(
      request(message([text("Please ask me first, then count the words in this sentence")]), { metadata: { mode: "react" } }),
    )) as Task;
    expect(waiting.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(partText(waiting.status!.message!.parts)).toMatch(
      /What should I know before I do this[\s\S]*Reply on this task with your answer\./,
    );
    const done = (await client.sendMessage(
      request(message([text("Use British spelling")], { taskId: waiting.id, contextId: waiting.contextId })),
    )) as Task;
    const task =
      done.status!.state === TaskState.TASK_STATE_COMPLETED
        ? done
        : await waitFor(client, waiting.id, (t) => t.status!.state === TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(task)).toMatch(/^Done\. The user answered: Use British spelling; /);
  });

  it("parallel pauses: each reply decides one (the first, or the one its data part names) until none is left", async () => {
    const client = await connect();
    let task = (await client.sendMessage(
      request(message([text("Compute 1+1, 2+2 and 3+3")]), { metadata: { mode: "plan_solve", approval: { tools: "all" } } }),
    )) as Task;
    const decided: string[] = [];
    while (task.status!.state === TaskState.TASK_STATE_INPUT_REQUIRED && decided.length < 10) {
      const { interrupts } = task.status!.message!.parts.find((p) => p.content?.$case === "data")!.content!.value as {
        interrupts: { interruptId: string }[];
      };
      // The last pause listed, named by its id; a data part decides exactly.
      const chosen = interrupts.at(-1)!.interruptId;
      decided.push(chosen);
      const data: Part = {
        content: { $case: "data", value: { interruptId: chosen, decision: "approve" } },
        mediaType: "application/json",
        filename: "",
        metadata: {},
      };
      task = (await client.sendMessage(request(message([data], { taskId: task.id })))) as Task;
      if (![TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_COMPLETED].includes(task.status!.state))
        task = await waitFor(client, task.id, (t) => t.status!.state !== TaskState.TASK_STATE_WORKING);
    }
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const run = (await new ApiClient(stack.url, stack.apiKey).request<RunView>("GET", `/v1/runs/${task.id}`)).body;
    const approvals = (run.interrupts as { interruptId: string; status: string; resolution: { decision: string } }[]).filter(
      (i) => i.resolution,
    );
    expect(new Set(decided).size).toBe(decided.length);
    expect(approvals.map((i) => i.interruptId).sort()).toEqual([...decided].sort());
    expect(approvals.every((i) => i.status === "resolved" && i.resolution.decision === "approve")).toBe(true);
    expect(approvals.length).toBeGreaterThanOrEqual(3);
  });

  it("a rejection with a reason goes to the run: no file is written, the run still answers", async () => {
    const client = await connect();
    const waiting = (await client.sendMessage(
      request(message([text(REPORT_INPUT)]), { metadata: { mode: "plan_solve", approval: { tools: "write" } } }),
    )) as Task;
    expect(waiting.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = (await client.sendMessage(request(message([text("reject: no files today")], { taskId: waiting.id })))) as Task;
    const task =
      done.status!.state === TaskState.TASK_STATE_COMPLETED
        ? done
        : await waitFor(client, waiting.id, (t) => t.status!.state === TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts.map((a) => a.name)).toEqual(["answer"]);
    const run = (await new ApiClient(stack.url, stack.apiKey).request<RunView>("GET", `/v1/runs/${waiting.id}`)).body;
    expect(run.interrupts).toMatchObject([{ status: "resolved", resolution: { decision: "reject", message: "no files today" } }]);
  });

  it("tasks/cancel stops a waiting task; cancelling again answers the cancelled task; a completed task is not cancelable", async () => {
    const client = await connect();
    const waiting = (await client.sendMessage(
      request(message([text(REPORT_INPUT)]), { metadata: { mode: "plan_solve", approval: { plan: true } } }),
    )) as Task;
    expect(waiting.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const cancelled = await client.cancelTask({ tenant: "", id: waiting.id, metadata: {} });
    expect(cancelled.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.cancelTask({ tenant: "", id: waiting.id, metadata: {} })).status!.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ tenant: "", id: waiting.id })).status!.state).toBe(TaskState.TASK_STATE_CANCELED);

    const done = (await client.sendMessage(request(message([text("Compute 2+2")]), { metadata: { mode: "react" } }))) as Task;
    await expect(client.cancelTask({ tenant: "", id: done.id, metadata: {} })).rejects.toThrow(/already ended/);
    expect((await client.getTask({ tenant: "", id: done.id })).status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("tasks/resubscribe picks up a task started without waiting and follows it to completion", async () => {
    const client = await connect();
    const started = (await client.sendMessage(
      request(message([text(REPORT_INPUT)]), { metadata: { mode: "plan_solve" }, returnImmediately: true }),
    )) as Task;
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(started.status!.state);
    const events = await collect(client.resubscribeTask({ tenant: "", id: started.id }));
    expect(events[0]!.payload?.$case).toBe("task");
    expect((events[0]!.payload!.value as Task).id).toBe(started.id);
    const task = await waitFor(client, started.id, (t) => t.status!.state === TaskState.TASK_STATE_COMPLETED);
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(task)).toContain("391");
    // An ended task has nothing more to stream.
    await expect(collect(client.resubscribeTask({ tenant: "", id: started.id }))).rejects.toThrow(/ended/);
  });

  it(
    "push notifications go out as signed webhooks (verified with the standardwebhooks library): input-required, then completed",
    async () => {
      const client = await connect();
      const endpoint = receiver.endpoint();
      const waiting = (await client.sendMessage(
        request(message([text(REPORT_INPUT)]), {
          metadata: { mode: "plan_solve", approval: { plan: true } },
          push: { url: endpoint.url, token: "tok-123" },
        }),
      )) as Task;
      expect(waiting.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const configs = await client.listTaskPushNotificationConfig({ tenant: "", taskId: waiting.id, pageSize: 0, pageToken: "" });
      expect(configs.configs).toMatchObject([{ taskId: waiting.id, url: endpoint.url, token: "tok-123", id: expect.any(String) }]);
      // A push carries the task as it is when sent: approving before the first went out (the
      // notifier runs apart) would make it a working task. So the approval waits for it.
      await endpoint.waitForRequests(1, LONG);
      await client.sendMessage(request(message([text("approve")], { taskId: waiting.id }), { returnImmediately: true }));

      const [paused, completed] = await endpoint.waitForRequests(2, LONG);
      const { secrets } = (await new ApiClient(stack.url, stack.apiKey).request("GET", "/v1/webhook-secrets")).body as {
        secrets: { secret: string }[];
      };
      const verifier = new Webhook(secrets[0]!.secret);
      const bodies = [paused!, completed!].map((r) => {
        expect(r.headers["x-a2a-notification-token"]).toBe("tok-123");
        expect(r.headers["content-type"]).toBe("application/a2a+json");
        return verifier.verify(r.body, r.headers as Record<string, string>) as {
          task: { id: string; status: { state: string; message?: unknown }; artifacts?: { name: string }[] };
        };
      });
      expect(bodies.map((b) => b.task.id)).toEqual([waiting.id, waiting.id]);
      expect(bodies.map((b) => b.task.status.state)).toEqual(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"]);
      expect(bodies[1]!.task.artifacts?.map((a) => a.name)).toEqual(["answer", "report.md"]);
      // A body altered in transit fails verification.
      expect(() => verifier.verify(completed!.body.replace("COMPLETED", "FAILED"), completed!.headers as Record<string, string>)).toThrow();
    },
    LONG,
  );

  it(
    "tasks/pushNotificationConfig set, get and delete on a waiting task: a deleted config receives nothing",
    async () => {
      const client = await connect();
      const endpoint = receiver.endpoint();
      const waiting = (await client.sendMessage(
        request(message([text(REPORT_INPUT)]), { metadata: { mode: "plan_solve", approval: { plan: true } } }),
      )) as Task;
      const set = await client.createTaskPushNotificationConfig({
        tenant: "",
        id: "mine",
        taskId: waiting.id,
        url: endpoint.url,
        token: "",
        authentication: { scheme: "Bearer", credentials: "c-1" },
      });
      expect(set).toMatchObject({ id: "mine", taskId: waiting.id, url: endpoint.url });
      expect(await client.getTaskPushNotificationConfig({ tenant: "", taskId: waiting.id, id: "mine" })).toMatchObject({
        id: "mine",
        authentication: { scheme: "Bearer", credentials: "c-1" },
      });
      // The receiver's credentials are a secret: the API's webhook listing shows them as ***.
      const listed = (await new ApiClient(stack.url, stack.apiKey).request("GET", `/v1/runs/${waiting.id}/webhooks`)).body as {
        webhook: { a2a: unknown };
      };
      expect(listed.webhook.a2a).toMatchObject({ id: "mine", authentication: { scheme: "Bearer", credentials: "***" } });
      expect(JSON.stringify(listed)).not.toContain("c-1");
      await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: waiting.id, id: "mine" });
      expect((await client.listTaskPushNotificationConfig({ tenant: "", taskId: waiting.id, pageSize: 0, pageToken: "" })).configs).toEqual(
        [],
      );
      // While the config existed, the pause's notification may still have been on its way (it is
      // delivered from a queue): what arrives before the deletion is legitimate, nothing after it.
      const beforeDeletion = endpoint.requests.length;
      await client.cancelTask({ tenant: "", id: waiting.id, metadata: {} });
      // The cancellation would have been pushed; a later task's push proves the receiver is reachable.
      const second = await client.sendMessage(
        request(message([text("Compute 2+2")]), { metadata: { mode: "react" }, push: { url: endpoint.url } }),
      );
      await endpoint.waitForRequests(beforeDeletion + 1, LONG);
      expect(endpoint.requests.slice(beforeDeletion).map((r) => JSON.parse(r.body).task.id)).toEqual([(second as Task).id]);
    },
    LONG,
  );

  it("a file part becomes one of the run's files", async () => {
    const client = await connect();
    const csv = Buffer.from("name,amount\na,3\nb,4\n");
    const file: Part = { content: { $case: "raw", value: csv }, mediaType: "text/csv", filename: "amounts.csv", metadata: {} };
    const task = (await client.sendMessage(
      request(message([text("Read amounts.csv and sum the amount column"), file]), {
        metadata: { mode: "react" },
        returnImmediately: true,
      }),
    )) as Task;
    const files = (await new ApiClient(stack.url, stack.apiKey).request<FileList>("GET", `/v1/runs/${task.id}/files`)).body.files as {
      name: string;
      bytes: number;
    }[];
    expect(files).toContainEqual(expect.objectContaining({ name: "amounts.csv", bytes: csv.byteLength }));
    await client.cancelTask({ tenant: "", id: task.id, metadata: {} }).catch(() => undefined);
  });
});

describe("A2A bad input", { timeout: LONG }, () => {
  const rpc = async (body: unknown, options: { key?: string; version?: string | null } = {}) => {
    const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${options.key ?? stack.apiKey}` };
    if (options.version !== null) headers["a2a-version"] = options.version ?? "1.0";
    const res = await fetch(`${stack.url}/a2a`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };

  it.each([
    ["an unknown method", { jsonrpc: "2.0", id: 1, method: "tasks/explode", params: {} }, -32601],
    ["params that are not an object", { jsonrpc: "2.0", id: 2, method: "GetTask", params: "run_1" }, -32602],
    [
      "a message without parts",
      { jsonrpc: "2.0", id: 3, method: "SendMessage", params: { message: { messageId: "m1", role: "ROLE_USER", parts: [] } } },
      -32602,
    ],
    ["an unknown task", { jsonrpc: "2.0", id: 4, method: "GetTask", params: { id: "run_nope" } }, -32001],
    [
      "a reply to an unknown task",
      {
        jsonrpc: "2.0",
        id: 5,
        method: "SendMessage",
        params: { message: { messageId: "m2", role: "ROLE_USER", taskId: "run_nope", parts: [{ text: "approve" }] } },
      },
      -32001,
    ],
    [
      "an unsupported metadata value",
      {
        jsonrpc: "2.0",
        id: 6,
        method: "SendMessage",
        params: { message: { messageId: "m3", role: "ROLE_USER", parts: [{ text: "hi" }] }, metadata: { mode: "fastest" } },
      },
      -32602,
    ],
    [
      "a file given by URL",
      {
        jsonrpc: "2.0",
        id: 7,
        method: "SendMessage",
        params: {
          message: { messageId: "m4", role: "ROLE_USER", parts: [{ text: "read it" }, { url: "http://169.254.169.254/x", filename: "x" }] },
        },
      },
      -32602,
    ],
    [
      "a push URL to a private address",
      {
        jsonrpc: "2.0",
        id: 8,
        method: "SendMessage",
        params: {
          message: { messageId: "m5", role: "ROLE_USER", parts: [{ text: "hi" }] },
          configuration: { taskPushNotificationConfig: { url: "http://10.0.0.1/hook" } },
        },
      },
      -32602,
    ],
  ])("%s is a JSON-RPC error that starts nothing", async (_what, body, code) => {
    const runIds = async () =>
      ((await new ApiClient(stack.url, stack.apiKey).request<RunList>("GET", "/v1/runs")).body.runs as { runId: string }[]).map(
        (r) => r.runId,
      );
    const before = await runIds();
    const { status, body: answer } = await rpc(body);
    expect(status).toBe(200);
    expect(answer).toMatchObject({ jsonrpc: "2.0", id: body.id, error: { code, message: expect.any(String) } });
    expect(await runIds()).toEqual(before);
  });

  it("not JSON is a parse error (400); no key is 401; an unknown A2A version is refused", async () => {
    expect(await rpc("{nope")).toMatchObject({ status: 400, body: { error: { code: -32700 } } });
    const anonymous = await fetch(`${stack.url}/a2a`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(anonymous.status).toBe(401);
    expect((await rpc({ jsonrpc: "2.0", id: 9, method: "GetTask", params: { id: "x" } }, { version: "2.0" })).body).toMatchObject({
      error: { code: -32009 },
    });
  });

  it("another tenant's task is not found: it cannot read, cancel or answer it, and the task is unchanged", async () => {
    const client = await connect();
    const waiting = (await client.sendMessage(
      request(message([text(REPORT_INPUT)]), { metadata: { mode: "plan_solve", approval: { plan: true } } }),
    )) as Task;
    const theirs = await connect(stack.keys.other!);
    await expect(theirs.getTask({ tenant: "", id: waiting.id })).rejects.toThrow(/No run with id/);
    await expect(theirs.cancelTask({ tenant: "", id: waiting.id, metadata: {} })).rejects.toThrow(/No run with id/);
    await expect(theirs.sendMessage(request(message([text("approve")], { taskId: waiting.id })))).rejects.toThrow(/No run with id/);
    const mine = await client.getTask({ tenant: "", id: waiting.id });
    expect(mine.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await client.cancelTask({ tenant: "", id: waiting.id, metadata: {} });
  });

  it("A2A 0.3 clients use the 0.3 method names on the same endpoint (message/send, tasks/get)", async () => {
    const sent = await rpc(
      {
        jsonrpc: "2.0",
        id: 10,
        method: "message/send",
        params: {
          message: { kind: "message", messageId: "m6", role: "user", parts: [{ kind: "text", text: "Compute 2+2" }] },
          metadata: { mode: "react" },
        },
      },
      { version: null },
    );
    expect(sent.body.result).toMatchObject({ kind: "task", status: { state: "completed" } });
    const got = await rpc({ jsonrpc: "2.0", id: 11, method: "tasks/get", params: { id: sent.body.result.id } }, { version: null });
    expect(got.body.result).toMatchObject({ kind: "task", id: sent.body.result.id, status: { state: "completed" } });
  });
});

/** Task states in the order a run moves through them (a pause may come back to working). */
function order(state: TaskState): number {
  return [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED].indexOf(state);
}
