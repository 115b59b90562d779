import { randomUUID } from "node:crypto";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CreateRunResponse, RunList, SessionView } from "../../shared/contracts/responses.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { Receiver, scripts } from "../support/receiver.js";

/**
 * The same run requests through every door — REST, MCP (`run_task`), A2A (`SendMessage`) and AG-UI
 * (`POST /v1/ag-ui`) — get the same outcome, each in its protocol's shape: a run accepted, an input
 * over MAX_INPUT_BYTES refused, a second message on a busy session under each tenant default
 * (reject, enqueue, interrupt; the interrupted runs are plan_solve runs), a tenant's tool policy, and a tenant whose
 * daily budget is spent. One table, one local stack
 * with the offline model; STREAM_MAX_SECONDS=2 makes the streaming doors (MCP, AG-UI) answer with the
 * run as it stands after two seconds.
 */

const BUSY_INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";
const LIMIT = 32_000;

let stack: RunningStack;
let client: Client;
const mcpClients: McpClient[] = [];

beforeAll(async () => {
  // TOOL_CATALOG_CACHE_MS=0: a policy saved here holds for the very next run (a container reuses a tenant's policies otherwise).
  stack = await startStack({
    INTERRUPT_TIMEOUT_SECONDS: "3600",
    STREAM_MAX_SECONDS: "2",
    MAX_INPUT_BYTES: String(LIMIT),
    TOOL_CATALOG_CACHE_MS: "0",
  });
  client = new Client(stack.url, stack.apiKey);
}, 300_000);

afterAll(async () => {
  await Promise.all(mcpClients.map((c) => c.close().catch(() => undefined)));
  await stack?.stop();
});

/** What a door answered, in common terms: the run it started, or Stepwise's error code (and the run in the way). */
type Outcome = { runId: string } | { refused: string; activeRunId?: string };
type Message = { input: string; mode: "react" | "plan_solve"; sessionId?: string };
type Door = (message: Message) => Promise<Outcome>;

const refusal = (error: { code?: string; details?: { activeRunId?: string } } | undefined): Outcome => ({
  refused: error?.code ?? "(no code)",
  ...(error?.details?.activeRunId ? { activeRunId: error.details.activeRunId } : {}),
});

/** REST: 202 with the run, or the status and the problem body. */
const rest: Door = async (message) => {
  const res = await client.request<CreateRunResponse & { error: Parameters<typeof refusal>[0] }>("POST", "/v1/runs", message);
  return res.status === 202 ? { runId: res.body.runId } : refusal(res.body.error);
};

/** MCP: run_task's result (the run, structured), or the tool error with the error in structuredContent. */
const mcp: Door = async (message) => {
  const mcpClient = new McpClient({ name: "doors-test", version: "1.0.0" }, { capabilities: {} });
  await mcpClient.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${stack.apiKey}` } },
    }),
  );
  mcpClients.push(mcpClient);
  const result = (await mcpClient.callTool({ name: "run_task", arguments: message }, undefined, { timeout: 60_000 })) as CallToolResult;
  const structured = result.structuredContent as { runId?: string; error?: { code: string; details?: { activeRunId?: string } } };
  // A run that ended badly (blocked, failed) is an error result too, with its runId: not a refusal.
  return result.isError && structured?.error && !structured.runId ? refusal(structured.error) : { runId: String(structured?.runId) };
};

/** A2A (1.0, JSON-RPC): SendMessage answering at once with the task, or a JSON-RPC error whose ErrorInfo carries the code. */
const a2a: Door = async (message) => {
  const res = await fetch(`${stack.url}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${stack.apiKey}`, "a2a-version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: {
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: message.input }], contextId: message.sessionId ?? "" },
        metadata: { mode: message.mode },
        configuration: { returnImmediately: true },
      },
    }),
  });
  const body = (await res.json()) as {
    result?: { task?: { id: string } };
    error?: { code: number; data?: { metadata?: { code?: string; details?: string } }[] };
  };
  if (body.result) return { runId: String(body.result.task?.id) };
  const info = body.error?.data?.find((d) => d.metadata?.code)?.metadata;
  return refusal({ code: info?.code, details: info?.details ? JSON.parse(info.details) : undefined });
};

/** AG-UI: the run's event stream (its Stepwise run in X-Stepwise-Run), or the HTTP status and problem body. */
const agUi: Door = async (message) => {
  const res = await fetch(`${stack.url}/v1/ag-ui`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({
      threadId: message.sessionId ?? `ses_doors${randomUUID().slice(0, 8)}`,
      runId: randomUUID(),
      messages: [{ id: "m1", role: "user", content: message.input }],
      tools: [],
      context: [],
      state: {},
      forwardedProps: { mode: message.mode },
    }),
  });
  if (res.status !== 200) return refusal(((await res.json()) as { error?: { code: string } }).error);
  await res.body?.cancel();
  return { runId: String(res.headers.get("x-stepwise-run")) };
};

const doors = { rest, mcp, a2a, agUi } as const;
const doorNames = Object.keys(doors) as (keyof typeof doors)[];

const runCount = async () => (await client.request<RunList>("GET", "/v1/runs?limit=100")).body.runs.length as number;
const runOf = async (outcome: Outcome) => (await client.run((outcome as { runId: string }).runId)) as { status: string; sessionId: string };
const session = async (sessionId: string) => (await client.request<SessionView>("GET", `/v1/sessions/${sessionId}`)).body;
const setDefault = async (multitask: string) => expect((await client.request("PUT", "/v1/settings", { multitask })).status).toBe(200);

/** A session whose run waits for a person (its report needs approval): in flight, deterministically. */
async function busySession(mode: "react" | "plan_solve") {
  const sessionId = `ses_busy${randomUUID().slice(0, 8)}`;
  const busy = await client.submit({ input: BUSY_INPUT, mode, sessionId, approval: { tools: "write" } });
  await client.waitForPending(busy.runId, 1, 120_000);
  return { sessionId, runId: busy.runId as string };
}

describe("every door accepts a run the same way", { timeout: 400_000 }, () => {
  it.each(doorNames)("%s: a task is accepted as a run of the session it names", async (door) => {
    const sessionId = `ses_new${randomUUID().slice(0, 8)}`;
    const outcome = await doors[door]({ input: "Compute 2+2", mode: "react", sessionId });
    expect(outcome).toEqual({ runId: expect.stringMatching(/^run_/) });
    expect(await runOf(outcome)).toMatchObject({ sessionId });
    expect((await client.waitForEnd((outcome as { runId: string }).runId, 120_000)).run.status).toBe("succeeded");
  });

  it.each(doorNames)("%s: an input one byte over the limit is refused (payload_too_large) and starts nothing", async (door) => {
    const before = await runCount();
    expect(await doors[door]({ input: "a".repeat(LIMIT + 1), mode: "react", sessionId: `ses_long${randomUUID().slice(0, 8)}` })).toEqual({
      refused: "payload_too_large",
    });
    expect(await runCount()).toBe(before);
  });

  it("tenant default reject: a second message on a busy session is refused at every door, naming the run in flight; nothing is created", async () => {
    await setDefault("reject");
    const busy = await busySession("react");
    const before = await runCount();
    for (const door of doorNames) {
      const outcome = await doors[door]({ input: "Actually, compute 5*5", mode: "react", sessionId: busy.sessionId });
      expect({ door, outcome }).toEqual({ door, outcome: { refused: "conflict", activeRunId: busy.runId } });
    }
    expect(await runCount()).toBe(before);
    expect(await session(busy.sessionId)).toMatchObject({ activeRunId: busy.runId, waitingRunIds: [] });
    await client.request("POST", `/v1/runs/${busy.runId}/cancel`);
  });

  it("tenant default enqueue: a second message waits behind the run in flight at every door, in the order sent", async () => {
    await setDefault("enqueue");
    const busy = await busySession("react");
    const queued: string[] = [];
    for (const door of doorNames) {
      const outcome = await doors[door]({ input: "Actually, compute 5*5", mode: "react", sessionId: busy.sessionId });
      expect({ door, outcome }).toEqual({ door, outcome: { runId: expect.stringMatching(/^run_/) } });
      queued.push((outcome as { runId: string }).runId);
      expect({ door, status: (await runOf(outcome)).status }).toEqual({ door, status: "queued" });
    }
    expect(await session(busy.sessionId)).toMatchObject({ activeRunId: busy.runId, waitingRunIds: queued });
    expect((await client.run(busy.runId)).status).toBe("awaiting_input");
    for (const runId of [...queued, busy.runId]) await client.request("POST", `/v1/runs/${runId}/cancel`);
  });

  it("tenant default interrupt: a second message stops the plan_solve run in flight at every door; the new run answers after it", async () => {
    await setDefault("interrupt");
    const busy = await Promise.all(doorNames.map(() => busySession("plan_solve")));
    for (const [i, door] of doorNames.entries()) {
      const outcome = await doors[door]({ input: "Actually, compute 5*5", mode: "react", sessionId: busy[i]!.sessionId });
      expect({ door, outcome }).toEqual({ door, outcome: { runId: expect.stringMatching(/^run_/) } });
      const stopped = await client.waitForEnd(busy[i]!.runId, 120_000);
      expect({ door, status: stopped.run.status }).toEqual({ door, status: "interrupted" });
      expect(stopped.events.at(-1)).toMatchObject({ type: "run.interrupted", data: { byRunId: (outcome as { runId: string }).runId } });
      const next = await client.waitForEnd((outcome as { runId: string }).runId, 120_000);
      expect({ door, status: next.run.status }).toEqual({ door, status: "succeeded" });
      // The interrupted run's turn stays in the session, before the new run's.
      const messages = (await session(busy[i]!.sessionId)).messages as { role: string; content: string; runId: string }[];
      expect(messages.map((m) => [m.role, m.runId])).toEqual([
        ["user", busy[i]!.runId],
        ["assistant", busy[i]!.runId],
        ["user", next.run.runId],
        ["assistant", next.run.runId],
      ]);
      expect(messages[1]!.content).toContain("Interrupted by a newer message");
    }
  });

  it("a tenant's tool policy holds at every door: the large write is denied with its reason and the agent writes a smaller file", async () => {
    const cedar = `@reason("Artifacts may have at most 1,000 characters.")
forbid(principal, action == Action::"write_artifact", resource) when { context.sizes.content > 1000 };`;
    expect((await client.request("PUT", "/v1/policies/artifact-size", { cedar })).status).toBe(201);
    try {
      const input = `use write_artifact {"filename": "notes.md", "content": "${"policy ".repeat(200)}"}`;
      for (const door of doorNames) {
        const outcome = (await doors[door]({ input, mode: "react", sessionId: `ses_policy${randomUUID().slice(0, 8)}` })) as {
          runId: string;
        };
        const { run, events } = await client.waitForEnd(outcome.runId, 120_000);
        const writes = events.flatMap((e) => (e.type === "tool.result" && e.data.tool === "write_artifact" ? [e.data] : []));
        const decided = events.flatMap((e) => (e.type === "guardrail.decided" ? [[e.data.check, e.data.verdict, e.data.mode]] : []));
        expect({ door, status: run.status, writes: writes.map((w) => w.ok), first: writes[0]?.output, decided }).toEqual({
          door,
          status: "succeeded",
          writes: [false, true],
          first: "Denied by policy: Artifacts may have at most 1,000 characters.",
          decided: [["artifact-size", "deny", "enforce"]],
        });
        const notes = run.files.find((f: { name: string }) => f.name === "notes.md") as { bytes: number } | undefined;
        expect({ door, small: (notes?.bytes ?? 0) > 0 && (notes?.bytes ?? 0) <= 1000 }).toEqual({ door, small: true });
      }
    } finally {
      expect((await client.request("DELETE", "/v1/policies/artifact-size")).status).toBe(204);
    }
  });
});

describe("every door refuses a tenant over its budget the same way", { timeout: 400_000 }, () => {
  afterAll(async () => {
    await client.request("PUT", "/v1/settings", { budget: {} });
  });

  it("a tenant whose day is spent is refused at every door (REST: 429 over_budget with Retry-After); nothing is created", async () => {
    // The day's counter counts the runs submitted while the tenant has a day budget: set it first.
    expect((await client.request("PUT", "/v1/settings", { budget: { day: { tokens: 1_000_000 } } })).status).toBe(200);
    const spender = await client.submit({ input: "Compute 2+2", mode: "react" });
    const { run } = await client.waitForEnd(spender.runId, 120_000);
    expect({ status: run.status, day: run.budget?.day }).toEqual({ status: "succeeded", day: { tokens: 1_000_000 } });
    expect(run.usage.promptTokens).toBeGreaterThan(10);
    // The day's budget now below what the tenant spent today.
    expect((await client.request("PUT", "/v1/settings", { budget: { day: { tokens: 10 } } })).status).toBe(200);
    const before = await runCount();
    const res = await fetch(`${stack.url}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ input: "Compute 3+3", mode: "react" }),
    });
    const body = (await res.json()) as { error?: { code: string } };
    expect({ status: res.status, code: body.error?.code }).toEqual({ status: 429, code: "over_budget" });
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter > 0 && retryAfter <= 86_400).toBe(true);
    for (const door of doorNames) {
      const outcome = await doors[door]({ input: "Compute 3+3", mode: "react", sessionId: `ses_spent${randomUUID().slice(0, 8)}` });
      expect({ door, outcome }).toEqual({ door, outcome: { refused: "over_budget" } });
    }
    expect(await runCount()).toBe(before);
  });
});

describe("every door checks a run's input the same way (guardrails)", { timeout: 400_000 }, () => {
  const FLAGGED = "Explain how to build a bomb";
  afterAll(async () => {
    await client.request("PUT", "/v1/settings", { guardrails: [] });
  });

  it("a check of an unknown kind or a bad regular expression is refused with the reason, and nothing is saved", async () => {
    const before = (await client.request("GET", "/v1/settings")).body;
    for (const [check, reason] of [
      [{ kind: "toxicity", action: "block" }, "guardrails.0.kind"],
      [{ kind: "regex", action: "block", pattern: "([a-z" }, "not a valid regular expression"],
    ] as const) {
      const res = await client.request<{ error: { code: string; message: string } }>("PUT", "/v1/settings", { guardrails: [check] });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.error)).toContain(reason);
    }
    expect((await client.request("GET", "/v1/settings")).body).toEqual(before);
  });

  it.each(doorNames)(
    "%s: a flagged input (moderation) ends the run blocked with the check's reason, before any model call",
    async (door) => {
      expect((await client.request("PUT", "/v1/settings", { guardrails: [{ kind: "moderation", action: "block" }] })).status).toBe(200);
      const outcome = await doors[door]({ input: FLAGGED, mode: "react", sessionId: `ses_flag${randomUUID().slice(0, 8)}` });
      expect(outcome).toEqual({ runId: expect.stringMatching(/^run_/) });
      const { run, events } = await client.waitForEnd((outcome as { runId: string }).runId, 120_000);
      expect({ door, status: run.status }).toEqual({ door, status: "blocked" });
      expect(run.error).toMatchObject({ code: "moderation", message: expect.stringContaining("flagged by moderation: violence") });
      expect(run.usage).toMatchObject({ llmCalls: 0, promptTokens: 0 });
      expect(events.map((e) => e.type)).toEqual(["guardrail.decided", "run.blocked"]);
      expect(JSON.stringify(events)).not.toContain("bomb");
    },
  );
});

describe("output checks hold on everything a client receives (guardrails)", { timeout: 400_000 }, () => {
  // The offline model streams an e-mail address in two deltas, cut before its "@"; the operator's
  // instructions make every agent end its answers with one.
  const ADDRESS = "ann.lee@example.com";
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await Receiver.start();
    const pii = { kind: "pii", action: "redact", entities: ["email"], on: ["output"] };
    expect((await client.request("PUT", "/v1/settings", { guardrails: [pii] })).status).toBe(200);
  });
  afterAll(async () => {
    await client.request("PUT", "/v1/settings", { guardrails: [] });
    await receiver?.close();
  });

  it.each(["react", "plan_solve"] as const)(
    "%s: an address streamed across two deltas reaches no stream, event, stored answer or webhook; the redacted answer does",
    async (mode) => {
      const endpoint = receiver.endpoint(scripts.ok());
      const { runId } = await client.submit({
        input: "Compute 2+2",
        mode,
        instructions: `End every answer with "Write to ${ADDRESS}"`,
        webhook: { url: endpoint.url },
      });
      const { run, events } = await client.waitForEnd(runId, 180_000);
      const [webhook] = await endpoint.waitForRequests(1, 120_000);
      const stream = await client.stream(runId);
      expect({ status: run.status, result: run.result }).toEqual({
        status: "succeeded",
        result: expect.stringContaining("Write to [redacted email]"),
      });
      expect(JSON.parse(webhook!.body).data.result).toBe(run.result);
      const streamed = events.flatMap((e) => (e.type === "agent.delta" ? [e.data.text as string] : [])).join("");
      expect(streamed).toContain("Write to [redacted email]");
      expect(events.some((e) => e.type === "guardrail.decided" && e.data.verdict === "redact" && e.data.kind === "pii")).toBe(true);
      // Neither half of the address: the first delta held "ann.lee", the second "@example.com".
      const received = {
        events: JSON.stringify(events),
        stream: JSON.stringify(stream.frames),
        answer: run.result,
        webhook: webhook!.body,
      };
      for (const [where, text] of Object.entries(received)) {
        expect({ where, leaked: ["ann.lee", "@example.com"].filter((half) => (text ?? "").includes(half)) }).toEqual({ where, leaked: [] });
      }
    },
  );
});
