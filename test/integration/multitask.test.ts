import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { CreateRunResponse, RunList, SessionView } from "../../shared/contracts/responses.js";
import { Client, type ErrorBody } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type ScriptedModel, startScriptedModel } from "../support/scriptedModel.js";
import { answer, callTools, marker, ScriptRouter, type Turn } from "../support/scriptedRoles.js";

/** A submit's answer: accepted (202) or, on a busy session, refused with the run in flight (409). */
type Submitted = CreateRunResponse & { error: ErrorBody["error"] & { details: { activeRunId: string } } };

/**
 * A second message on a busy session, end to end (local stack, scripted OpenAI-compatible model):
 * for each `multitask` strategy, runs sent to one session while its first run waits for a person
 * (in flight, deterministically), then the runs' final states, the session's turns in order, and
 * what the next run's model request held.
 */

const ofType = <T extends RunEvent["type"]>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
/** A request's conversation without its system prompt: what the model was shown of the session. */
const conversation = (turn: Turn) =>
  turn.messages.filter((m) => m.role === "user" || (m.role === "assistant" && !m.tool_calls)).map((m) => [m.role, m.content]);

/**
 * One stack for the file, with two API processes (as Lambda runs several containers): requests go
 * to them in turn, which the racing submits below need and the other cases do not mind. Unrouted
 * model requests get "done.".
 */
const router = new ScriptRouter(() => answer("done."));
let scripted: ScriptedModel;
let stack: RunningStack;
let client: Client;

beforeAll(async () => {
  scripted = await startScriptedModel(router.script);
  stack = await startStack({
    OPENAI_BASE_URL: scripted.url,
    OPENAI_API_KEY: "test",
    STEPWISE_MODEL: "scripted",
    STEPWISE_LOCAL_API_CONTAINERS: "2",
  });
  client = new Client(stack.url, stack.apiKey);
});

afterAll(async () => {
  await stack?.stop();
  await scripted?.close();
});

describe("multitask: a second message on a busy session", () => {
  /**
   * The first run of a session: computes 12*12 (a read tool, done at once), then asks to write a
   * report (a write tool: it waits for a person's approval, in flight), then answers.
   */
  const firstRun = (name: string) => {
    router.on(name, (_turn, turns) =>
      turns.length === 1
        ? callTools([{ name: "calculator", arguments: { expression: "12*12" } }])
        : turns.length === 2
          ? callTools([{ name: "write_report", arguments: { title: "Squares", content: "12*12 = 144" } }])
          : answer(`${name}: 12*12 is 144, report written.`),
    );
    return `${marker(name)} Compute 12*12, then write a short report.`;
  };
  /** A later run: answers at once, naming itself. */
  const laterRun = (name: string) => {
    router.on(name, () => answer(`${name}: done.`));
    return `${marker(name)} Actually, compute 5*5 instead.`;
  };

  /** Sends the first run and waits until it is waiting for approval of its report. */
  async function busySession(name: string) {
    const sessionId = `mt-${name}-${Date.now().toString(36)}`;
    const input = firstRun(name);
    const first = await client.submit({ input, mode: "react", sessionId, approval: { tools: "write" } });
    const { pending } = await client.waitForPending(first.runId, 1, 60_000);
    return { sessionId, input, runId: first.runId, interruptId: pending[0].interruptId as string };
  }

  const session = async (sessionId: string) => (await client.request<SessionView>("GET", `/v1/sessions/${sessionId}`)).body;

  it("reject (the default): 409 naming the run in flight and its links, nothing created; once it ends, the next run sees its turn", async () => {
    const busy = await busySession("rj-a");
    const before = (await client.request<RunList>("GET", "/v1/runs?limit=100")).body.runs.length;
    const input = laterRun("rj-b");
    const refused = await client.request<ErrorBody>("POST", "/v1/runs", { input, mode: "react", sessionId: busy.sessionId });
    expect(refused.status).toBe(409);
    expect(refused.body.error.details).toMatchObject({
      activeRunId: busy.runId,
      status: "awaiting_input",
      links: { self: expect.stringContaining(busy.runId) },
    });
    expect((await client.request<RunList>("GET", "/v1/runs?limit=100")).body.runs.length).toBe(before);
    expect(await session(busy.sessionId)).toMatchObject({ activeRunId: busy.runId, waitingRunIds: [], messages: [] });
    expect(router.of("rj-b")).toHaveLength(0);

    await client.decide(busy.runId, busy.interruptId, { decision: "approve" });
    expect((await client.waitForEnd(busy.runId)).run.status).toBe("succeeded");
    // A client that sees the run ended may send the next message at once.
    const next = await client.request<CreateRunResponse>("POST", "/v1/runs", { input, mode: "react", sessionId: busy.sessionId });
    expect(next.status).toBe(202);
    expect((await client.waitForEnd(next.body.runId)).run.status).toBe("succeeded");
    expect(conversation(router.of("rj-b")[0]!)).toEqual([
      ["user", busy.input],
      ["assistant", "rj-a: 12*12 is 144, report written."],
      ["user", input],
    ]);
  });

  it("enqueue: three runs wait behind the first, start in submission order, and each sees every earlier turn", async () => {
    const busy = await busySession("eq-a");
    const inputs = ["eq-b", "eq-c", "eq-d"].map(laterRun);
    const queued = [];
    for (const input of inputs) queued.push(await client.submit({ input, mode: "react", sessionId: busy.sessionId, multitask: "enqueue" }));
    expect(queued.map((r) => r.status)).toEqual(["queued", "queued", "queued"]);
    expect(await session(busy.sessionId)).toMatchObject({ activeRunId: busy.runId, waitingRunIds: queued.map((r) => r.runId) });
    // Each waits behind the one sent before it, and says so first.
    const behind = [busy.runId, ...queued.map((r) => r.runId)];
    for (const [i, run] of queued.entries()) {
      const [event] = await client.events(run.runId);
      expect(event).toMatchObject({ type: "run.queued_behind", data: { runId: behind[i], activeRunId: busy.runId, position: i + 1 } });
      expect((await client.run(run.runId)).status).toBe("queued");
    }
    expect(router.of("eq-b")).toHaveLength(0);

    await client.decide(busy.runId, busy.interruptId, { decision: "approve" });
    for (const run of [busy, ...queued]) expect((await client.waitForEnd(run.runId, 90_000)).run.status).toBe("succeeded");
    // One after another: each run's model calls came after the run before it had answered.
    const order = router.turns.filter((t) => ["eq-a", "eq-b", "eq-c", "eq-d"].includes(t.marker ?? "")).map((t) => t.marker);
    expect(order).toEqual(["eq-a", "eq-a", "eq-a", "eq-b", "eq-c", "eq-d"]);
    const turns = [
      ["user", busy.input],
      ["assistant", "eq-a: 12*12 is 144, report written."],
      ["user", inputs[0]],
      ["assistant", "eq-b: done."],
      ["user", inputs[1]],
      ["assistant", "eq-c: done."],
      ["user", inputs[2]],
    ];
    expect(conversation(router.of("eq-d")[0]!)).toEqual(turns);
    expect((await session(busy.sessionId)).messages.map((m: any) => [m.role, m.content])).toEqual([...turns, ["assistant", "eq-d: done."]]);
    expect(await session(busy.sessionId)).toMatchObject({ activeRunId: null, waitingRunIds: [] });
  });

  it("interrupt: the run in flight ends interrupted at its safe point, what it finished stays in the session, and the new run sees it", async () => {
    const busy = await busySession("in-a");
    const input = laterRun("in-b");
    const second = await client.submit({ input, mode: "react", sessionId: busy.sessionId, multitask: "interrupt" });
    expect(second.status).toBe("queued");
    const first = await client.waitForEnd(busy.runId);
    expect(first.run.status).toBe("interrupted");
    expect(first.events.at(-1)).toMatchObject({ type: "run.interrupted", data: { byRunId: second.runId } });
    // It never wrote its report (the write waited for approval) and asked the model nothing more.
    expect(ofType(first.events, "tool.result").map((e) => e.data.tool)).toEqual(["calculator"]);
    expect(router.of("in-a")).toHaveLength(2);

    expect((await client.waitForEnd(second.runId)).run.status).toBe("succeeded");
    const seen = conversation(router.of("in-b")[0]!);
    expect(seen).toEqual([
      ["user", busy.input],
      ["assistant", expect.stringMatching(/^\(Interrupted[^)]*\) Done so far:\n- calculator: 12\*12 = 144$/)],
      ["user", input],
    ]);
    expect((await session(busy.sessionId)).messages.map((m: any) => m.runId)).toEqual([busy.runId, busy.runId, second.runId, second.runId]);
  });

  it("interrupt of a run mid-thought: it stops at its next round (a model call under way is aborted), keeps the tool results it had, and the new run sees them", async () => {
    const sessionId = `mt-ir-${Date.now().toString(36)}`;
    // The second model call thinks until the interrupt is in: the interrupt arrives while the model thinks, on any machine.
    let answerNow = () => {};
    const interruptIsIn = new Promise<void>((resolve) => {
      answerNow = resolve;
    });
    router.on("ir-a", (_turn, turns) =>
      turns.length === 1
        ? callTools([{ name: "calculator", arguments: { expression: "12*12" } }])
        : turns.length === 2
          ? { ...callTools([{ name: "calculator", arguments: { expression: "7+8" } }]), heldUntil: interruptIsIn }
          : answer("ir-a: 144 and 15."),
    );
    const inputA = `${marker("ir-a")} Compute 12*12 and 7+8.`;
    const a = await client.submit({ input: inputA, mode: "react", sessionId });
    await expect.poll(() => router.of("ir-a").length, { timeout: 60_000, interval: 50 }).toBe(2);
    const input = laterRun("ir-b");
    const b = await client.submit({ input, mode: "react", sessionId, multitask: "interrupt" });
    expect(b.status).toBe("queued");
    // The run reads as ended once the submit is answered, while its model call is still under way.
    expect((await client.run(a.runId)).status).toBe("interrupted");
    answerNow();
    const first = await client.waitForEnd(a.runId, 90_000);
    expect(first.run.status).toBe("interrupted");
    expect((await client.waitForEnd(b.runId, 90_000)).run.status).toBe("succeeded");
    // The model call under way when the run ended is aborted (its reply, if any, is never used):
    // the run gives no answer, and what it had finished is its turn.
    expect(first.run.result).toBeNull();
    expect(ofType(first.events, "tool.result").map((e) => e.data.output)).toContain("12*12 = 144");
    expect(router.of("ir-a").length).toBeLessThanOrEqual(3);
    const [, said] = conversation(router.of("ir-b")[0]!);
    expect(said).toEqual(["assistant", expect.stringContaining("- calculator: 12*12 = 144")]);
    expect(conversation(router.of("ir-b")[0]!)).toEqual([["user", inputA], said, ["user", input]]);
    expect(said![1]).not.toContain("ir-a: 144 and 15.");
  });

  it("rollback: the run in flight is cancelled and its turn is gone from the session, as if never sent", async () => {
    const busy = await busySession("rb-a");
    const input = laterRun("rb-b");
    const second = await client.submit({ input, mode: "react", sessionId: busy.sessionId, multitask: "rollback" });
    expect(second.status).toBe("queued");
    expect((await client.waitForEnd(busy.runId)).run.status).toBe("cancelled");
    expect((await client.waitForEnd(second.runId)).run.status).toBe("succeeded");
    expect(conversation(router.of("rb-b")[0]!)).toEqual([["user", input]]);
    expect((await session(busy.sessionId)).messages.map((m: any) => [m.role, m.content])).toEqual([
      ["user", input],
      ["assistant", "rb-b: done."],
    ]);
  });
});

describe("multitask: two API processes taking the same session's submits at once", () => {
  it("two submits racing for an idle session under reject: one runs, the other gets 409 naming it, in every session", async () => {
    expect(stack.apiContainerPids).toHaveLength(2);
    const sessions = Array.from({ length: 8 }, (_, i) => `race-${i}-${Date.now().toString(36)}`);
    // Requests go to the API processes in turn: each session's pair meets in two processes.
    const answers = await Promise.all(
      sessions.flatMap((sessionId) =>
        [1, 2].map((n) => client.request<Submitted>("POST", "/v1/runs", { input: `${marker(`r${n}`)} Say hi.`, mode: "react", sessionId })),
      ),
    );
    for (let i = 0; i < sessions.length; i++) {
      const pair = answers.slice(2 * i, 2 * i + 2);
      expect(pair.map((a) => a.status).sort()).toEqual([202, 409]);
      const accepted = pair.find((a) => a.status === 202)!.body;
      expect(pair.find((a) => a.status === 409)!.body.error.details.activeRunId).toBe(accepted.runId);
    }
    for (const a of answers.filter((a) => a.status === 202)) expect((await client.waitForEnd(a.body.runId)).run.status).toBe("succeeded");
  });

  it("two submits racing to enqueue behind a busy session: both wait, one after the other, and run in that order", async () => {
    const sessionId = `race-q-${Date.now().toString(36)}`;
    router.on("q-a", (_turn, turns) =>
      turns.length === 1 ? callTools([{ name: "write_report", arguments: { title: "T", content: "x" } }]) : answer("q-a: done."),
    );
    const first = await client.submit({
      input: `${marker("q-a")} Write a report.`,
      mode: "react",
      sessionId,
      approval: { tools: "write" },
    });
    const { pending } = await client.waitForPending(first.runId, 1, 60_000);
    const inputs = ["q-b", "q-c"].map((name) => `${marker(name)} Then this.`);
    const [b, c] = await Promise.all(inputs.map((input) => client.submit({ input, mode: "react", sessionId, multitask: "enqueue" })));
    expect([b!.status, c!.status]).toEqual(["queued", "queued"]);
    const { waitingRunIds } = (await client.request<SessionView>("GET", `/v1/sessions/${sessionId}`)).body;
    expect([...waitingRunIds].sort()).toEqual([b!.runId, c!.runId].sort());
    const positions = await Promise.all([b!, c!].map(async (r) => (await client.events(r.runId))[0]));
    expect(positions.map((e: any) => e.data.position).sort()).toEqual([1, 2]);

    await client.decide(first.runId, pending[0].interruptId, { decision: "approve" });
    for (const id of [first.runId, ...waitingRunIds]) expect((await client.waitForEnd(id)).run.status).toBe("succeeded");
    // They ran in queue order, and the session reads in that order.
    const [firstWaiting, secondWaiting] = await Promise.all(waitingRunIds.map((id: string) => client.run(id)));
    expect(router.turns.filter((t) => t.marker === "q-b" || t.marker === "q-c").map((t) => t.marker)).toEqual(
      [firstWaiting, secondWaiting].map((r) => (r.input.includes("q-b") ? "q-b" : "q-c")),
    );
    const messages = (await client.request<SessionView>("GET", `/v1/sessions/${sessionId}`)).body.messages;
    expect(messages.map((m: any) => m.runId)).toEqual([
      first.runId,
      first.runId,
      waitingRunIds[0],
      waitingRunIds[0],
      waitingRunIds[1],
      waitingRunIds[1],
    ]);
  });
});
