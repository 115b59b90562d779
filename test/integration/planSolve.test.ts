import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventPage } from "../../shared/apiClient/client.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { CreateRunResponse } from "../../shared/contracts/responses.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * A plan_solve run end to end, over HTTP, against the whole local stack: the offline model plans
 * two steps (two calculations in parallel, then a report), executors call real tools, the
 * summarizer answers, and every step is visible in the event log and the stream.
 */
const INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";

let stack: RunningStack;
let client: Client;
let submitted: Awaited<ReturnType<Client["submit"]>>;
let run: any;
let events: RunEvent[];

beforeAll(async () => {
  stack = await startStack();
  client = new Client(stack.url, stack.apiKey);
  const res = await client.request<CreateRunResponse>("POST", "/v1/runs", { input: INPUT, mode: "plan_solve" });
  expect(res.status).toBe(202);
  submitted = res.body;
  ({ run, events } = await client.waitForEnd(submitted.runId));
});

afterAll(async () => {
  await stack?.stop();
});

const ofType = <T extends RunEvent["type"]>(type: T) => events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

describe("plan_solve run", () => {
  it("is accepted with 202, its ids, status queued and links", () => {
    expect(submitted).toMatchObject({ runId: expect.stringMatching(/^run_/), sessionId: expect.stringMatching(/^ses_/), status: "queued" });
    const { runId } = submitted;
    expect(submitted.links.self).toBe(`${stack.url}/v1/runs/${runId}`);
    expect(submitted.links.events).toBe(`${stack.url}/v1/runs/${runId}/events`);
    expect(submitted.links.stream).toBe(`${stack.url}/v1/runs/${runId}/stream`);
  });

  it("succeeds with an answer citing both results and the report it wrote", () => {
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.mode).toBe("plan_solve");
    expect(run.requestedMode).toBe("plan_solve");
    expect(run.input).toBe(INPUT);
    expect(run.result).toContain("391");
    expect(run.result).toContain("47");
    expect(run.files.map((f: { name: string }) => f.name)).toContain("report.md");
    expect(run.error).toBeNull();
    expect(run.endedAt).toEqual(expect.any(String));
  });

  it("has a finished two-step plan with every step completed", () => {
    expect(run.plan.steps).toHaveLength(2);
    expect(run.plan.steps.map((s: { status: string }) => s.status)).toEqual(["completed", "completed"]);
    expect(run.plan.finished).toBe(true);
    expect(run.plan.steps[0].tasks).toHaveLength(2);
  });

  it("lists its tasks with their results", () => {
    const first = run.tasks.filter((t: any) => t.iteration === 0);
    expect(first.map((t: any) => t.status)).toEqual(["succeeded", "succeeded"]);
    expect(first.map((t: any) => t.result).join(" ")).toMatch(/391[\s\S]*47|47[\s\S]*391/);
    expect(run.tasks.every((t: any) => t.startedAt && t.endedAt)).toBe(true);
  });

  it("accounts for its usage and its execution", async () => {
    expect(run.usage.llmCalls).toBeGreaterThan(0);
    expect(run.usage.toolCalls).toBeGreaterThan(0);
    expect(run.usage.promptTokens).toBeGreaterThan(0);
    // The notifier counts the transitions once the execution has ended.
    await expect.poll(async () => (await client.run(submitted.runId)).usage.stateTransitions, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(run.executionArn).toMatch(new RegExp(`^arn:aws:states:[^:]+:\\d+:execution:[^:]+:${submitted.runId}$`));
  });

  it("records an event log numbered 1..N with no gap or duplicate, ending with run.succeeded", () => {
    expect(events.length).toBeGreaterThan(0);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    for (const type of ["run.started", "plan.updated", "task.started", "tool.called", "tool.result", "task.completed", "run.succeeded"]) {
      expect(events.map((e) => e.type)).toContain(type);
    }
    expect(events.at(-1)!.type).toBe("run.succeeded");
    expect(events.filter((e) => e.type === "run.succeeded")).toHaveLength(1);
    expect(events[0]!.type).toBe("run.started");
    const succeeded = ofType("run.succeeded")[0]!;
    expect(succeeded.data.result).toBe(run.result);
    expect(succeeded.data.files).toContain("report.md");
    // times never go backwards along the sequence
    const times = events.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("records the calculator calls and their results", () => {
    const calls = ofType("tool.called").filter((e) => e.data.tool === "calculator");
    const results = ofType("tool.result").filter((e) => e.data.tool === "calculator");
    expect(calls.map((e) => (e.data.arguments as { expression: string }).expression).sort()).toEqual(["(120/8)+2^5", "17*23"]);
    expect(results.every((e) => e.data.ok)).toBe(true);
    expect(results.map((e) => e.data.output).sort()).toEqual(["(120/8)+2^5 = 47", "17*23 = 391"]);
    // every result answers a call made before it
    for (const result of results) {
      const call = calls.find((c) => c.data.callId === result.data.callId);
      expect(call, result.data.callId).toBeDefined();
      expect(call!.seq).toBeLessThan(result.seq);
      expect(call!.data.agent).toBe("executor");
      expect(call!.data.taskId).toBe(result.data.taskId);
    }
  });

  it("ran the two tasks of step 1 in parallel: each started before the other completed", () => {
    const started = ofType("task.started").filter((e) => e.data.iteration === 0);
    const completed = ofType("task.completed").filter((e) => e.data.iteration === 0);
    const s = (id: string) => started.find((e) => e.data.taskId === id)!;
    const c = (id: string) => completed.find((e) => e.data.taskId === id)!;
    for (const id of ["s1.t1", "s1.t2"]) {
      expect(s(id), `task.started ${id}`).toBeDefined();
      expect(c(id), `task.completed ${id}`).toBeDefined();
    }
    // In the log's order (sequence numbers are handed out atomically as events happen) …
    expect(s("s1.t2").seq).toBeLessThan(c("s1.t1").seq);
    expect(s("s1.t1").seq).toBeLessThan(c("s1.t2").seq);
    // … and by the recorded times.
    expect(Date.parse(s("s1.t2").at)).toBeLessThanOrEqual(Date.parse(c("s1.t1").at));
    expect(Date.parse(s("s1.t1").at)).toBeLessThanOrEqual(Date.parse(c("s1.t2").at));
    // The task records agree: the two intervals overlap.
    const [t1, t2] = ["s1.t1", "s1.t2"].map((id) => run.tasks.find((t: any) => t.iteration === 0 && t.taskId === id));
    expect(Date.parse(t2.startedAt)).toBeLessThan(Date.parse(t1.endedAt));
    expect(Date.parse(t1.startedAt)).toBeLessThan(Date.parse(t2.endedAt));
  });

  it("says each fact once: streamed text is agent.delta only, never repeated as an agent.thought", () => {
    const deltas = ofType("agent.delta");
    expect(deltas.length).toBeGreaterThan(0);
    const streamedBy = (source: string) =>
      deltas
        .filter((e) => (e.data.taskId ?? e.data.agent) === source)
        .map((e) => e.data.text)
        .join("");
    for (const thought of ofType("agent.thought")) {
      expect(streamedBy(thought.data.taskId ?? thought.data.agent), `agent.thought ${thought.seq}`).not.toContain(thought.data.text.trim());
    }
  });

  it("gives every task an id unique within the run: the step, then the task (s1.t1, s1.t2, s2.t1), in events, the API and the journal", () => {
    const ids = run.tasks.map((t: any) => t.taskId);
    expect(ids).toEqual(["s1.t1", "s1.t2", "s2.t1"]);
    expect(new Set(ofType("task.started").map((e) => e.data.taskId))).toEqual(new Set(ids));
    expect(
      new Set(
        ofType("tool.called")
          .filter((e) => e.data.agent === "executor")
          .map((e) => e.data.taskId),
      ),
    ).toEqual(new Set(ids));
  });

  it("ran step 2 only after step 1 had finished", () => {
    const lastOfStep1 = Math.max(
      ...ofType("task.completed")
        .filter((e) => e.data.iteration === 0)
        .map((e) => e.seq),
    );
    const step2 = ofType("task.started").filter((e) => e.data.iteration === 1);
    expect(step2).toHaveLength(1);
    expect(step2[0]!.seq).toBeGreaterThan(lastOfStep1);
  });

  it("replays the whole run as Server-Sent Events after it ended, then closes", async () => {
    const stream = await client.stream(submitted.runId);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(stream.closed).toBe(true);
    expect(stream.frames).toHaveLength(events.length);
    stream.frames.forEach((frame, i) => {
      const event = events[i]!;
      expect(frame.id).toBe(String(event.seq));
      expect(frame.event).toBe(event.type);
      expect(JSON.parse(frame.data)).toEqual(event);
    });
    expect(stream.frames.at(-1)!.event).toBe("run.succeeded");
  });

  it("pages through the event log with after and limit", async () => {
    const first = await client.request<EventPage>("GET", `/v1/runs/${submitted.runId}/events?limit=5`);
    expect(first.status).toBe(200);
    expect(first.body.events).toEqual(events.slice(0, 5));
    expect(first.body.next).toEqual({ after: 5 });
    const rest = await client.events(submitted.runId, first.body.next.after);
    expect(rest).toEqual(events.slice(5));
    const beyond = await client.request<EventPage>("GET", `/v1/runs/${submitted.runId}/events?after=${events.length}`);
    expect(beyond.body.events).toEqual([]);
    expect(beyond.body.next).toEqual({ after: events.length });
  });
});
