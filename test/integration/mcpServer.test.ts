import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventPage } from "../../shared/apiClient/client.js";
import type { RunList, RunView } from "../../shared/contracts/responses.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * Stepwise as an MCP server (`/mcp`), driven by the official SDK client over Streamable HTTP
 * against the whole local stack: the tools, a plan_solve run to its answer and file, progress
 * notifications, a paused tool call approved through elicitation, a client without elicitation
 * told how to decide and resuming after it reconnects, and the key and tenant checks.
 */

const REPORT_INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";

let stack: RunningStack;
const clients: McpClient[] = [];

beforeAll(async () => {
  stack = await startStack({ INTERRUPT_TIMEOUT_SECONDS: "3600" }, ["other"]);
}, 300_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stack?.stop();
});

async function connect(options: { key?: string; elicitation?: boolean } = {}): Promise<McpClient> {
  const client = new McpClient(
    { name: "stepwise-test", version: "1.0.0" },
    { capabilities: options.elicitation ? { elicitation: { form: {} } } : {} },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${options.key ?? stack.apiKey}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const LONG = { timeout: 170_000, resetTimeoutOnProgress: true };
const textOf = (result: CallToolResult) =>
  result.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");

describe("MCP server", () => {
  it("lists its tools with input schemas", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["cancel_run", "decide", "get_run", "run_task"]);
    const runTask = tools.find((t) => t.name === "run_task")!;
    expect(runTask.inputSchema.required).toEqual(["input"]);
    expect(Object.keys(runTask.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(["input", "mode", "files", "sessionId", "approval"]),
    );
    expect(client.getServerVersion()?.name).toBe("stepwise");
  });

  it("run_task runs a plan_solve task to its answer, with progress notifications and the report as a resource link", async () => {
    const client = await connect();
    const progress: number[] = [];
    const result = (await client.callTool({ name: "run_task", arguments: { input: REPORT_INPUT, mode: "plan_solve" } }, undefined, {
      ...LONG,
      onprogress: (p) => progress.push(p.progress),
    })) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ status: "succeeded" });
    expect(textOf(result)).toContain("391");
    const links = result.content.filter((c) => c.type === "resource_link");
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({ name: "report.md", uri: expect.stringMatching(/\/v1\/runs\/run_[a-z0-9]+\/files\/report\.md$/) });
    // One notification per event, in order, the last one the run's end.
    expect(progress.length).toBeGreaterThan(3);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const runId = (result.structuredContent as { runId: string }).runId;
    const events = (await new Client(stack.url, stack.apiKey).request<EventPage>("GET", `/v1/runs/${runId}/events?limit=500`)).body.events;
    expect(progress.at(-1)).toBe(events.at(-1)?.seq);
  });

  it("a paused write is asked through elicitation; accepting approves it and the call returns the answer", async () => {
    const client = await connect({ elicitation: true });
    const asked: { message: string; schema: unknown }[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push({ message: request.params.message, schema: (request.params as { requestedSchema?: unknown }).requestedSchema });
      return { action: "accept", content: { decision: "approve" } };
    });
    const result = (await client.callTool(
      { name: "run_task", arguments: { input: REPORT_INPUT, mode: "plan_solve", approval: { tools: "write" } } },
      undefined,
      LONG,
    )) as CallToolResult;
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toContain("write_artifact");
    expect(asked[0]!.schema).toMatchObject({ properties: { decision: { enum: ["approve", "reject"] } }, required: ["decision"] });
    expect(result.structuredContent).toMatchObject({ status: "succeeded" });
    expect(result.content.filter((c) => c.type === "resource_link").map((c) => (c as { name: string }).name)).toEqual(["report.md"]);
    const runId = (result.structuredContent as { runId: string }).runId;
    const run = (await new Client(stack.url, stack.apiKey).request<RunView>("GET", `/v1/runs/${runId}`)).body;
    expect(run.interrupts).toMatchObject([{ kind: "tool_approval", status: "resolved", resolution: { decision: "approve" } }]);
  });

  it("declining the elicitation rejects the call: no file is written, the run still answers", async () => {
    const client = await connect({ elicitation: true });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
    const result = (await client.callTool(
      { name: "run_task", arguments: { input: REPORT_INPUT, mode: "plan_solve", approval: { tools: "write" } } },
      undefined,
      LONG,
    )) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ status: "succeeded", files: [] });
    const runId = (result.structuredContent as { runId: string }).runId;
    const run = (await new Client(stack.url, stack.apiKey).request<RunView>("GET", `/v1/runs/${runId}`)).body;
    expect(run.interrupts).toMatchObject([{ status: "resolved", resolution: { decision: "reject" } }]);
  });

  it("without elicitation the result says how to decide; after reconnecting, decide and get_run finish the run", async () => {
    const first = await connect();
    const waiting = (await first.callTool(
      { name: "run_task", arguments: { input: REPORT_INPUT, mode: "plan_solve", approval: { tools: "write" } } },
      undefined,
      LONG,
    )) as CallToolResult;
    const structured = waiting.structuredContent as {
      runId: string;
      status: string;
      pendingInterrupts: { interruptId: string; kind: string }[];
    };
    expect(structured.status).toBe("awaiting_input");
    expect(structured.pendingInterrupts).toMatchObject([{ kind: "tool_approval" }]);
    expect(textOf(waiting)).toContain("decide tool");
    await first.close();

    const second = await connect();
    const decided = (await second.callTool({
      name: "decide",
      arguments: { runId: structured.runId, interruptId: structured.pendingInterrupts[0]!.interruptId, decision: "approve" },
    })) as CallToolResult;
    expect((decided.structuredContent as { pendingInterrupts: unknown[] }).pendingInterrupts).toEqual([]);
    const done = (await second.callTool({ name: "get_run", arguments: { runId: structured.runId } }, undefined, LONG)) as CallToolResult;
    expect(done.structuredContent).toMatchObject({ runId: structured.runId, status: "succeeded" });
    expect(textOf(done)).toContain("391");
  });

  it("a client that disconnects mid-run reconnects and follows the same run with get_run to its answer", async () => {
    const first = await connect();
    const progress: number[] = [];
    // The first progress notification: the run is under way; the client goes away.
    const call = first.callTool({ name: "run_task", arguments: { input: REPORT_INPUT, mode: "plan_solve" } }, undefined, {
      ...LONG,
      onprogress: (p) => {
        progress.push(p.progress);
        if (progress.length === 1) void first.close();
      },
    });
    await expect(call).rejects.toThrow();
    expect(progress.length).toBeGreaterThan(0);
    const client = new Client(stack.url, stack.apiKey);
    const [{ runId }] = (await client.request<RunList>("GET", "/v1/runs?limit=1")).body.runs;
    expect((await client.request<RunView>("GET", `/v1/runs/${runId}`)).body.status).not.toBe("cancelled");

    const second = await connect();
    const again: number[] = [];
    const done = (await second.callTool({ name: "get_run", arguments: { runId } }, undefined, {
      ...LONG,
      onprogress: (p) => again.push(p.progress),
    })) as CallToolResult;
    expect(done.structuredContent).toMatchObject({ runId, status: "succeeded" });
    expect(textOf(done)).toContain("391");
    expect(done.content.filter((c) => c.type === "resource_link").map((c) => (c as { name: string }).name)).toEqual(["report.md"]);
    // The reconnected call's progress goes over the whole log, in order, to the run's end.
    const events = (await client.request<EventPage>("GET", `/v1/runs/${runId}/events?limit=500`)).body.events as { seq: number }[];
    expect(again).toEqual(events.map((e) => e.seq));
  });

  it("run_task as an MCP task: the task is the run, followed by tasks/get and tasks/result, also from a new connection", async () => {
    const client = await connect();
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    expect((await client.listTools()).tools.find((t) => t.name === "run_task")!.execution).toEqual({ taskSupport: "optional" });
    const messages: { type: string; task?: { taskId: string; status: string }; result?: CallToolResult }[] = [];
    const stream = client.experimental.tasks.callToolStream(
      { name: "run_task", arguments: { input: REPORT_INPUT, mode: "plan_solve" } },
      CallToolResultSchema,
      { ...LONG, task: { ttl: 600_000 } },
    );
    for await (const message of stream) messages.push(message as (typeof messages)[number]);
    expect(messages[0]).toMatchObject({ type: "taskCreated", task: { taskId: expect.stringMatching(/^run_/), status: "working" } });
    const taskId = messages[0]!.task!.taskId;
    const last = messages.at(-1)!;
    expect(last.type).toBe("result");
    expect(last.result!.structuredContent).toMatchObject({ runId: taskId, status: "succeeded" });
    expect(textOf(last.result!)).toContain("391");

    const other = await connect();
    expect(await other.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: "completed" });
    const again = (await other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)) as CallToolResult;
    expect(again.content.filter((c) => c.type === "resource_link").map((c) => (c as { name: string }).name)).toEqual(["report.md"]);
    expect((await other.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(taskId);
  });

  it("a paused run's task is input_required; tasks/cancel cancels the run; another key's client does not see the task", async () => {
    const client = await connect();
    const stream = client.experimental.tasks.callToolStream(
      { name: "run_task", arguments: { input: REPORT_INPUT, mode: "plan_solve", approval: { plan: true } } },
      CallToolResultSchema,
      { ...LONG, task: {} },
    );
    const created = (await stream.next()).value as { type: string; task: { taskId: string } };
    await stream.return(undefined);
    expect(created.type).toBe("taskCreated");
    const { taskId } = created.task;
    let task = await client.experimental.tasks.getTask(taskId);
    for (let poll = 0; poll < 600 && task.status === "working"; poll++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      task = await client.experimental.tasks.getTask(taskId);
    }
    expect(task).toMatchObject({ status: "input_required", statusMessage: expect.stringContaining("decide") });

    await expect((await connect({ key: stack.keys.other })).experimental.tasks.getTask(taskId)).rejects.toThrow(/not found/i);
    expect(await client.experimental.tasks.cancelTask(taskId)).toMatchObject({ taskId, status: "cancelled" });
    expect((await new Client(stack.url, stack.apiKey).request<RunView>("GET", `/v1/runs/${taskId}`)).body.status).toBe("cancelled");
  });

  it("cancel_run stops a waiting run", async () => {
    const client = await connect();
    const waiting = (await client.callTool(
      { name: "run_task", arguments: { input: REPORT_INPUT, mode: "plan_solve", approval: { plan: true } } },
      undefined,
      LONG,
    )) as CallToolResult;
    const { runId } = waiting.structuredContent as { runId: string };
    const cancelled = (await client.callTool({ name: "cancel_run", arguments: { runId } })) as CallToolResult;
    expect(cancelled.structuredContent).toMatchObject({ runId, status: "cancelled" });
  });

  it("is tenant-scoped: another key's client cannot see the run; no key is 401", async () => {
    const mine = await connect();
    const waiting = (await mine.callTool(
      { name: "run_task", arguments: { input: "Compute 2+2", mode: "react" } },
      undefined,
      LONG,
    )) as CallToolResult;
    const { runId } = waiting.structuredContent as { runId: string };
    const theirs = await connect({ key: stack.keys.other });
    const seen = (await theirs.callTool({ name: "get_run", arguments: { runId, wait: false } })) as CallToolResult;
    expect(seen.isError).toBe(true);
    expect(textOf(seen)).toContain(`No run with id ${runId}`);

    const anonymous = await fetch(`${stack.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("GET and DELETE are refused with 405 (no server-initiated stream, no session to end)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${stack.url}/mcp`, {
        method,
        headers: { authorization: `Bearer ${stack.apiKey}`, accept: "text/event-stream" },
      });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
  });
});
