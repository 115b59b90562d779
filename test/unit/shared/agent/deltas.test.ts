import { describe, expect, it } from "vitest";
import { textStream } from "../../../../shared/agent/deltas.js";
import { runView } from "../../../../shared/views/runView.js";
import { withRun } from "../../../support/memoryRun.js";

const links = { api: "http://api.test", stream: "http://stream.test", console: false };
const retry = { attempt: 1, retries: 3, reason: "the reply broke off (terminated)", waitMs: 500 };

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
});
