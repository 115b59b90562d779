import { buildResumeArray, HttpAgent, runHttpRequest, transformHttpEventStream, verifyEvents } from "@ag-ui/client";
import type { BaseEvent } from "@ag-ui/core";
import { EventSchemas } from "@ag-ui/core/schemas";
import { lastValueFrom, toArray } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventPage } from "../../shared/apiClient/client.js";
import type { CreateRunResponse, RunList, RunView, SessionView } from "../../shared/contracts/responses.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * `GET /v1/runs/{id}/stream` as AG-UI events (`?protocol=ag-ui` or an AG-UI Accept), read with
 * `@ag-ui/client`'s own HTTP and SSE handling and its event-order checks, each event validated by
 * `@ag-ui/core`'s schemas; and resumed with Last-Event-ID at every point, with no event lost or
 * repeated.
 */

const REPORT_INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";

let stack: RunningStack;
let client: Client;
let runId: string;
let interruptId: string;

beforeAll(async () => {
  stack = await startStack({ INTERRUPT_TIMEOUT_SECONDS: "3600" });
  client = new Client(stack.url, stack.apiKey);
  runId = (
    await client.request<CreateRunResponse>("POST", "/v1/runs", { input: REPORT_INPUT, mode: "plan_solve", approval: { tools: "write" } })
  ).body.runId;
  const { pending } = await client.waitForPending(runId, 1, 90_000);
  interruptId = pending[0].interruptId;
  await client.decide(runId, interruptId, { decision: "approve" });
  await client.waitForEnd(runId, 90_000);
}, 240_000);

afterAll(async () => {
  await stack?.stop();
});

const streamUrl = (query = "?protocol=ag-ui") => `${stack.url}/v1/runs/${runId}/stream${query}`;

/** The stream read by the official client: its SSE parsing, its JSON decoding and its order checks. */
async function agUiEvents(init: { query?: string; headers?: Record<string, string> } = {}): Promise<BaseEvent[]> {
  const http$ = runHttpRequest(() =>
    fetch(streamUrl(init.query), { headers: { authorization: `Bearer ${stack.apiKey}`, ...init.headers } }),
  );
  return lastValueFrom(transformHttpEventStream(http$).pipe(verifyEvents(), toArray()));
}

/** The raw frames: id and AG-UI event. */
async function frames(lastEventId?: string): Promise<{ id: string; event: Record<string, unknown> }[]> {
  const res = await fetch(streamUrl(), {
    headers: { authorization: `Bearer ${stack.apiKey}`, ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((block) => /^data: /m.test(block))
    .map((block) => ({ id: /^id: (.*)$/m.exec(block)![1]!, event: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) }));
}

type RunParameters = Parameters<HttpAgent["runAgent"]>[0];

/** One HttpAgent run; every event it received fits @ag-ui/core's schemas. */
async function runValidated(agent: HttpAgent, parameters: RunParameters) {
  const seen: BaseEvent[] = [];
  await agent.runAgent(parameters, { onEvent: ({ event }) => void seen.push(event) });
  for (const event of seen) expect(EventSchemas.safeParse(event).error, JSON.stringify(event)).toBeUndefined();
  return seen as unknown as ({ type: string } & Record<string, unknown>)[];
}

describe("the AG-UI view of a run", () => {
  it("is a valid AG-UI stream: each event fits its schema, in an order the client accepts, the pause as the interrupt outcome", async () => {
    const events = await agUiEvents();
    for (const event of events) expect(EventSchemas.safeParse(event).error, JSON.stringify(event)).toBeUndefined();
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("RUN_STARTED");
    expect(types).toEqual(
      expect.arrayContaining([
        "STATE_SNAPSHOT",
        "STEP_STARTED",
        "STEP_FINISHED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
      ]),
    );
    // Two AG-UI runs on the session's thread: up to the pause, then after the decision.
    const finished = events.filter((e) => e.type === "RUN_FINISHED") as unknown as {
      runId: string;
      threadId: string;
      outcome: { type: string; interrupts?: { id: string; reason: string }[] };
      result?: { answer: string };
    }[];
    expect(finished.map((e) => e.outcome.type)).toEqual(["interrupt", "success"]);
    expect(finished[0]!.outcome.interrupts).toMatchObject([{ id: interruptId, reason: "tool_approval" }]);
    expect(finished.map((e) => e.runId)).toEqual([runId, `${runId}.1`]);
    expect(finished[1]!.result!.answer).toContain("391");
    expect(types.at(-1)).toBe("RUN_FINISHED");
    // Every tool call the log has is here once, started, given its arguments, ended and answered.
    const log = (await client.request<EventPage>("GET", `/v1/runs/${runId}/events?limit=500`)).body.events as { type: string }[];
    const calls = log.filter((e) => e.type === "tool.called").length;
    for (const type of ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"])
      expect(types.filter((t) => t === type)).toHaveLength(calls);
  });

  it("is chosen by the Accept header too; without either, the native stream", async () => {
    const byAccept = await agUiEvents({ query: "", headers: { accept: "application/vnd.ag-ui.event+json, text/event-stream" } });
    expect(byAccept.length).toBe((await agUiEvents()).length);
    const native = await fetch(streamUrl(""), { headers: { authorization: `Bearer ${stack.apiKey}` } });
    expect(await native.text()).toMatch(/^event: run\.started$/m);
  });

  it("resumes with Last-Event-ID at every point: the rest, nothing lost, nothing repeated", async () => {
    const all = await frames();
    expect(new Set(all.map((f) => f.id)).size).toBe(all.length);
    for (let cut = 0; cut < all.length; cut++) {
      const rest = await frames(all[cut]!.id);
      expect(rest, `after ${all[cut]!.id}`).toEqual(all.slice(cut + 1));
    }
    // A plain sequence number resumes after all of that log event's AG-UI events.
    const lastOfFirst = all.filter((f) => f.id.startsWith("1.")).length;
    expect(await frames("1")).toEqual(all.slice(lastOfFirst));
  });

  it("refuses a Last-Event-ID it cannot place with 400", async () => {
    const res = await fetch(streamUrl(), { headers: { authorization: `Bearer ${stack.apiKey}`, "last-event-id": "x.1" } });
    expect(res.status).toBe(400);
  });

  it("an HttpAgent runs a thread: each turn is a run of the session, every event valid; the second turn remembers the first", async () => {
    const threadId = `ses_agui${Date.now().toString(36)}`;
    const agent = new HttpAgent({ url: `${stack.url}/v1/ag-ui`, headers: { authorization: `Bearer ${stack.apiKey}` }, threadId });
    const turn = async (text: string) => {
      const seen: BaseEvent[] = [];
      agent.addMessage({ id: `m${agent.messages.length}`, role: "user", content: text });
      const result = await agent.runAgent({ forwardedProps: { mode: "react" } }, { onEvent: ({ event }) => void seen.push(event) });
      for (const event of seen) expect(EventSchemas.safeParse(event).error, JSON.stringify(event)).toBeUndefined();
      return { seen, result };
    };
    const first = await turn("Compute 17*23");
    expect(first.seen.map((e) => e.type)).toEqual(
      expect.arrayContaining(["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_RESULT", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED"]),
    );
    expect(first.result.result).toMatchObject({ answer: expect.stringContaining("391") });
    // The agent keeps the assistant's streamed message in its thread.
    expect(agent.messages.some((m) => m.role === "assistant" && typeof m.content === "string" && m.content.includes("391"))).toBe(true);

    await turn("Now add 9 to that");
    const session = (await client.request<SessionView>("GET", `/v1/sessions/${threadId}`)).body;
    expect(session.messages.filter((m: { role: string }) => m.role === "user")).toHaveLength(2);
  });

  it("an HttpAgent's run pauses with the interrupt outcome; the thread's next run resumes it with an approval and finishes", async () => {
    const threadId = `ses_aguipause${Date.now().toString(36)}`;
    const agent = new HttpAgent({ url: `${stack.url}/v1/ag-ui`, headers: { authorization: `Bearer ${stack.apiKey}` }, threadId });
    const run = (parameters: RunParameters) => runValidated(agent, parameters);
    agent.addMessage({ id: "m0", role: "user", content: REPORT_INPUT });
    const paused = await run({ runId: "agui-first", forwardedProps: { mode: "plan_solve", approval: { tools: "write" } } });
    // One AG-UI run under the input's run id, closed by the interrupt outcome: the stream ends there.
    expect(paused.filter((e) => e.type === "RUN_STARTED" || e.type === "RUN_FINISHED").map((e) => [e.type, e.runId])).toEqual([
      ["RUN_STARTED", "agui-first"],
      ["RUN_FINISHED", "agui-first"],
    ]);
    expect(paused[0]).toMatchObject({ threadId, protocolVersion: "1.0" });
    const outcome = paused.at(-1)!.outcome as {
      type: string;
      interrupts: { id: string; reason: string; message: string; toolCallId: string; responseSchema: object }[];
    };
    expect(outcome.type).toBe("interrupt");
    expect(outcome.interrupts).toMatchObject([
      { reason: "tool_approval", message: expect.stringContaining("write_artifact"), responseSchema: { required: ["decision"] } },
    ]);
    const [interrupt] = outcome.interrupts;
    // The interrupt names the paused call, which the stream started and left unanswered.
    expect(paused.find((e) => e.type === "TOOL_CALL_START" && e.toolCallId === interrupt!.toolCallId)).toMatchObject({
      toolCallName: "write_artifact",
    });
    expect(paused.some((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === interrupt!.toolCallId)).toBe(false);
    expect(agent.pendingInterrupts.map((i) => i.id)).toEqual([interrupt!.id]);
    const [stepwiseRun] = (await client.request<RunList>("GET", `/v1/runs?sessionId=${threadId}`)).body.runs as { runId: string }[];
    expect((await client.request<RunView>("GET", `/v1/runs/${stepwiseRun!.runId}`)).body).toMatchObject({
      status: "awaiting_input",
      interrupts: [{ interruptId: interrupt!.id, status: "pending" }],
    });

    // The client will not go on past the pause without answering it.
    await expect(agent.runAgent({ runId: "agui-unanswered" })).rejects.toThrow(/pending interrupt/);
    // A payload that does not fit the responseSchema is refused before any run, and decides nothing.
    const bad = await fetch(`${stack.url}/v1/ag-ui`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({
        threadId,
        runId: "agui-bad",
        messages: agent.messages,
        resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { decision: "maybe" } }],
      }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("responseSchema");
    expect((await client.request<RunView>("GET", `/v1/runs/${stepwiseRun!.runId}`)).body.interrupts).toMatchObject([{ status: "pending" }]);

    const resumed = await run({
      runId: "agui-second",
      resume: buildResumeArray(agent.pendingInterrupts, { [interrupt!.id]: { status: "resolved", payload: { decision: "approve" } } }),
    });
    expect(resumed.filter((e) => e.type === "RUN_STARTED" || e.type === "RUN_FINISHED").map((e) => [e.type, e.runId])).toEqual([
      ["RUN_STARTED", "agui-second"],
      ["RUN_FINISHED", "agui-second"],
    ]);
    expect(resumed.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === interrupt!.toolCallId)).toBeDefined();
    expect(resumed.at(-1)).toMatchObject({
      type: "RUN_FINISHED",
      outcome: { type: "success" },
      result: { answer: expect.stringContaining("391"), files: ["report.md"] },
    });
    expect(agent.pendingInterrupts).toEqual([]);
    // The same Stepwise run went on (no new one), approved, to its answer and its file.
    const runs = (await client.request<RunList>("GET", `/v1/runs?sessionId=${threadId}`)).body.runs as { runId: string }[];
    expect(runs.map((r) => r.runId)).toEqual([stepwiseRun!.runId]);
    expect((await client.request<RunView>("GET", `/v1/runs/${stepwiseRun!.runId}`)).body).toMatchObject({
      status: "succeeded",
      interrupts: [{ status: "resolved", resolution: { decision: "approve" } }],
    });
  });

  it("a resume that cancels the pause rejects the paused write: no file is written, the run still answers", async () => {
    const threadId = `ses_aguicancel${Date.now().toString(36)}`;
    const agent = new HttpAgent({ url: `${stack.url}/v1/ag-ui`, headers: { authorization: `Bearer ${stack.apiKey}` }, threadId });
    agent.addMessage({ id: "m0", role: "user", content: REPORT_INPUT });
    await runValidated(agent, { forwardedProps: { mode: "plan_solve", approval: { tools: "write" } } });
    const [pause] = agent.pendingInterrupts;
    const resumed = await runValidated(agent, {
      resume: buildResumeArray(agent.pendingInterrupts, { [pause!.id]: { status: "cancelled" } }),
    });
    expect(resumed.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" }, result: { files: [] } });
    const [stepwiseRun] = (await client.request<RunList>("GET", `/v1/runs?sessionId=${threadId}`)).body.runs as { runId: string }[];
    expect((await client.request<RunView>("GET", `/v1/runs/${stepwiseRun!.runId}`)).body.interrupts).toMatchObject([
      { interruptId: pause!.id, status: "resolved", resolution: { decision: "reject" } },
    ]);
  });

  it("refuses an AG-UI input that makes no run with 400, and starts nothing", async () => {
    const before = (await client.request<RunList>("GET", "/v1/runs?limit=100")).body.runs.length;
    const res = await fetch(`${stack.url}/v1/ag-ui`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({
        threadId: "not a session id!",
        runId: "r1",
        messages: [{ id: "1", role: "user", content: "hi" }],
        tools: [],
        context: [],
        state: {},
        forwardedProps: {},
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("threadId");
    expect((await client.request<RunList>("GET", "/v1/runs?limit=100")).body.runs.length).toBe(before);
  });
});
