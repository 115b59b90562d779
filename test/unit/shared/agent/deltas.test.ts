import { describe, expect, it } from "vitest";
import { textStream } from "../../../../shared/agent/deltas.js";
import { runView } from "../../../../shared/views/runView.js";
import { eventTypes, withRun } from "../../../support/memoryRun.js";

const links = { api: "http://api.test", stream: "http://stream.test", console: false };
const retry = { attempt: 1, retries: 3, reason: "the reply broke off (terminated)", waitMs: 500 };
/** A subscription that asked to hear of model waits. */
const HEARS = { url: "https://hooks.example.com/stepwise", events: ["run.waiting_on_model"] };

describe("a streamed model call that is retried", () => {
  it("withdraws the broken reply's text, says it retries, and only then streams the new reply", async () => {
    const { ports, fakes, runId } = await withRun({ status: "running" });
    const stream = textStream(ports, runId, { agent: "router" });
    stream.onText('[{"name":"choose_mode","argum');
    await new Promise((resolve) => setTimeout(resolve, 400)); // the coalescer writes the partial reply
    stream.onText("ents"); // buffered, never written: the reply is void
    stream.onRetry(retry);
    stream.onText("The whole answer.");
    await stream.close();

    expect(fakes.events.all(runId).map((e) => [e.type, "text" in e.data ? e.data.text : ""])).toEqual([
      ["agent.delta", '[{"name":"choose_mode","argum'],
      ["agent.withdrawn", ""],
      ["model.retrying", ""],
      ["agent.delta", "The whole answer."],
    ]);
    expect(fakes.events.all(runId)[2]!.data).toEqual({ agent: "router", ...retry });
  });

  it("says the run waits for the model while it does, and no longer once the call answered", async () => {
    const { ports, runId } = await withRun({ status: "running" });
    const stream = textStream(ports, runId, { agent: "executor", taskId: "t2" });
    stream.onRetry({ ...retry, reason: "the model could not be reached (ECONNREFUSED)" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const waiting = runView((await ports.runs.get(runId))!, [], [], [], links);
    expect(waiting.statusDetail).toMatch(
      /^Waiting for the model \(executor t2\): the model could not be reached \(ECONNREFUSED\); retry 1 of 3 at /,
    );

    await stream.close();
    expect(runView((await ports.runs.get(runId))!, [], [], [], links).statusDetail).toBeNull();
  });

  it("withdraws nothing when the broken call streamed no text", async () => {
    const { ports, fakes, runId } = await withRun({ status: "running" });
    const stream = textStream(ports, runId, { agent: "planner" });
    stream.onRetry(retry);
    stream.onRetry({ ...retry, attempt: 2 });
    await stream.close();
    expect(fakes.events.all(runId).map((e) => e.type)).toEqual(["model.retrying", "model.retrying"]);
  });

  it("queues the waiting spell for the notifier once, at its first retry; the next call's spell again", async () => {
    const { ports, fakes, runId } = await withRun({ status: "running", webhook: HEARS });
    const first = textStream(ports, runId, { agent: "executor", taskId: "t1" });
    first.onRetry({ ...retry, reason: "HTTP 429 (rate limited)" });
    first.onRetry({ ...retry, attempt: 2, waitMs: 1000 });
    first.onRetry({ ...retry, attempt: 3, waitMs: 2000 });
    await first.close();
    const spells = fakes.notifyQueue.take();
    expect(spells).toEqual([
      {
        kind: "model_waiting",
        runId,
        waitId: expect.stringMatching(new RegExp(`^msg_${runId}_wait_[0-9a-z]+$`)),
        at: expect.any(String),
        modelWait: { agent: "executor", taskId: "t1", ...retry, reason: "HTTP 429 (rate limited)", retryAt: expect.any(String) },
      },
    ]);
    const [spell] = spells as Extract<(typeof spells)[number], { kind: "model_waiting" }>[];
    expect(Date.parse(spell!.modelWait.retryAt) - Date.parse(spell!.at)).toBe(retry.waitMs);
    // Every retry is still an event on the run.
    expect(eventTypes(fakes, runId)).toEqual(["model.retrying", "model.retrying", "model.retrying"]);

    // A later call that waits is another spell, under another id.
    const second = textStream(ports, runId, { agent: "summarizer" });
    second.onRetry(retry);
    await second.close();
    const [next] = fakes.notifyQueue.take() as (typeof spells)[number][];
    expect(next).toMatchObject({ kind: "model_waiting", modelWait: { agent: "summarizer", attempt: 1 } });
    expect(next!.kind === "model_waiting" && next!.waitId).not.toBe(spell!.waitId);
  });

  it("a call that never waited queues nothing", async () => {
    const { ports, fakes, runId } = await withRun({ status: "running" });
    const stream = textStream(ports, runId, { agent: "react" });
    stream.onText("An answer at the first try.");
    await stream.close();
    expect(fakes.notifyQueue.take()).toEqual([]);
  });

  it("a spell the queue refused is queued again when the call ends: late, not lost", async () => {
    const { ports, fakes, runId } = await withRun({ status: "running", webhook: HEARS });
    const send = fakes.notifyQueue.send.bind(fakes.notifyQueue);
    let refusals = 1;
    fakes.notifyQueue.send = async (message, delayMs) => {
      if (refusals-- > 0) throw new Error("SQS: service unavailable");
      return send(message, delayMs);
    };
    const stream = textStream(ports, runId, { agent: "react" });
    stream.onRetry(retry);
    stream.onRetry({ ...retry, attempt: 2 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fakes.notifyQueue.sent).toEqual([]);
    await stream.close();
    expect(fakes.notifyQueue.take()).toEqual([
      expect.objectContaining({ kind: "model_waiting", modelWait: expect.objectContaining({ attempt: 1 }) }),
    ]);
  });

  it("queues nothing for a run nobody hears of model waits from: no webhook, status changes only, an A2A config its client deleted", async () => {
    const push = { url: "https://agent.example.com/push", a2a: { id: "cfg-1", wireVersion: "1.0" as const } };
    for (const webhook of [undefined, { url: HEARS.url }, { url: HEARS.url, events: ["run.succeeded"] }, { url: push.url, events: [] }]) {
      const { ports, fakes, runId } = await withRun({ status: "running", ...(webhook ? { webhook } : {}) });
      // Whether the step handed over the run's subscription or the spell reads the run itself.
      for (const known of [webhook ?? null, undefined]) {
        const stream = textStream(ports, runId, { agent: "react" }, { webhook: known });
        stream.onRetry(retry);
        stream.onRetry({ ...retry, attempt: 2 });
        await stream.close();
      }
      expect(fakes.notifyQueue.take()).toEqual([]);
      // The retries are still told on the run, as always.
      expect(eventTypes(fakes, runId)).toEqual(Array(4).fill("model.retrying"));
    }
    // An A2A client's push config hears of them (a working update): one message per spell.
    const { ports, fakes, runId } = await withRun({ status: "running", webhook: push });
    const stream = textStream(ports, runId, { agent: "react" });
    stream.onRetry(retry);
    stream.onRetry({ ...retry, attempt: 2 });
    await stream.close();
    expect(fakes.notifyQueue.take()).toEqual([expect.objectContaining({ kind: "model_waiting", runId })]);
  });

  it("reads the run for its subscription once per spell, not per retry; never when the step handed it over", async () => {
    const { ports, fakes, runId } = await withRun({ status: "running", webhook: HEARS });
    let reads = 0;
    const get = ports.runs.get.bind(ports.runs);
    ports.runs.get = (...args) => {
      reads++;
      return get(...args);
    };
    const unknown = textStream(ports, runId, { agent: "executor", taskId: "t1" });
    for (const attempt of [1, 2, 3]) unknown.onRetry({ ...retry, attempt });
    await unknown.close();
    expect(reads).toBe(1);
    const known = textStream(ports, runId, { agent: "react" }, { webhook: HEARS });
    for (const attempt of [1, 2, 3]) known.onRetry({ ...retry, attempt });
    await known.close();
    expect(reads).toBe(1);
    expect(fakes.notifyQueue.take().map((m) => m.kind)).toEqual(["model_waiting", "model_waiting"]);
  });
});
