import { verifyEvents } from "@ag-ui/client";
import type { BaseEvent } from "@ag-ui/core";
import { EventSchemas } from "@ag-ui/core/schemas";
import { from, lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import type { EventBody, RunEvent } from "../../../../shared/contracts/events.js";
import { AgUiRequestedRun, AgUiView } from "../../../../shared/protocols/agUi.js";

/**
 * The AG-UI view of a log, and the one AG-UI run an HttpAgent's POST gets: pauses end AG-UI runs
 * with the interrupt outcome, a resume gets the run after the pause it answers, and every run the
 * client is sent is valid on its own (@ag-ui/core's schemas, @ag-ui/client's order checks).
 */

const log = (bodies: EventBody[]): RunEvent[] =>
  bodies.map((body, i) => ({ ...body, seq: i + 1, at: "2026-11-26T00:00:00.000Z" }) as RunEvent);

const called = (callId: string, tool: string): EventBody => ({
  type: "tool.called",
  data: { agent: "react", callId, tool, arguments: {} },
});
const opened = (interruptId: string, callId: string): EventBody => ({
  type: "interrupt.opened",
  data: { interruptId, kind: "tool_approval", summary: `Run write_artifact (${callId})`, toolName: "write_artifact", callId },
});
const result = (callId: string): EventBody => ({
  type: "tool.result",
  data: { agent: "react", callId, tool: "write_artifact", ok: true, output: "saved" },
});

/** Two write calls of one round, each paused: the second pause comes before the first is decided. */
const TWO_PAUSES = log([
  { type: "run.started", data: { input: "x", mode: "react" } } as EventBody,
  called("c1", "write_artifact"),
  called("c2", "write_artifact"),
  opened("int_a", "c1"),
  opened("int_b", "c2"),
  { type: "interrupt.resolved", data: { interruptId: "int_a", kind: "tool_approval", decision: "approve" } },
  { type: "interrupt.resolved", data: { interruptId: "int_b", kind: "tool_approval", decision: "approve" } },
  result("c1"),
  result("c2"),
  { type: "run.succeeded", data: { result: "done", files: [] } },
]);

function requested(events: RunEvent[], runId: string, continues?: string[]) {
  const answer = new AgUiRequestedRun(new AgUiView("ses_t", "run_t"), runId, continues && new Set(continues));
  const frames = events.map((e) => (answer.done ? "" : answer.frames(e))).join("");
  const agUi = frames
    .split("\n\n")
    .filter(Boolean)
    .map((block) => JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as BaseEvent & Record<string, unknown>);
  return { agUi, done: answer.done };
}

async function valid(events: BaseEvent[]) {
  for (const event of events) expect(EventSchemas.safeParse(event).error, JSON.stringify(event)).toBeUndefined();
  await lastValueFrom(from(events).pipe(verifyEvents(), toArray()));
}

describe("the AG-UI run an HttpAgent is sent", () => {
  it("a new run: up to its first pause, under the input's run id, the interrupt naming its tool call", async () => {
    const { agUi, done } = requested(TWO_PAUSES, "input-1");
    await valid(agUi);
    expect(done).toBe(true);
    expect(agUi.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "RUN_FINISHED",
    ]);
    expect(agUi[0]).toMatchObject({ runId: "input-1", threadId: "ses_t", protocolVersion: "1.0" });
    expect(agUi.at(-1)).toMatchObject({
      runId: "input-1",
      outcome: { type: "interrupt", interrupts: [{ id: "int_a", reason: "tool_approval", toolCallId: "c1" }] },
    });
  });

  it("a resume of the first pause gets the next AG-UI run, which ends at the pause the client has not seen yet", async () => {
    const { agUi } = requested(TWO_PAUSES, "input-2", ["int_a"]);
    await valid(agUi);
    expect(agUi.map((e) => e.type)).toEqual(["RUN_STARTED", "RUN_FINISHED"]);
    expect(agUi.at(-1)).toMatchObject({
      runId: "input-2",
      outcome: { type: "interrupt", interrupts: [{ id: "int_b", toolCallId: "c2" }] },
    });
  });

  it("a resume of the last pause gets the rest, to the run's end", async () => {
    const { agUi } = requested(TWO_PAUSES, "input-3", ["int_b"]);
    await valid(agUi);
    expect(agUi.filter((e) => e.type === "TOOL_CALL_RESULT").map((e) => e.toolCallId)).toEqual(["c1", "c2"]);
    expect(agUi.at(-1)).toMatchObject({ type: "RUN_FINISHED", runId: "input-3", outcome: { type: "success" }, result: { answer: "done" } });
  });

  it("a run stopped for a newer message of its session finishes with the cancelled outcome", async () => {
    const { agUi } = requested(
      log([
        { type: "run.started", data: { input: "x", mode: "react" } } as EventBody,
        { type: "run.interrupted", data: { reason: "a newer message" } },
      ]),
      "input-4",
    );
    await valid(agUi);
    expect(agUi.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "cancelled" } });
  });
});

describe("a model call retried in the AG-UI view", () => {
  const delta = (text: string): EventBody => ({ type: "agent.delta", data: { agent: "router", text } });
  const RETRIED = log([
    { type: "run.started", data: { input: "x", mode: "auto" } } as EventBody,
    delta('[{"name":"choose_mode","argum'),
    { type: "agent.withdrawn", data: { agent: "router", reason: "the reply broke off (terminated)" } },
    { type: "model.retrying", data: { agent: "router", attempt: 1, retries: 3, reason: "the reply broke off (terminated)", waitMs: 500 } },
    delta("The whole answer."),
    { type: "run.succeeded", data: { result: "The whole answer.", files: [] } },
  ]);

  it("names the withdrawn message for the client to drop and streams the retried reply as a new message", async () => {
    const { agUi } = requested(RETRIED, "input-5");
    await valid(agUi);
    const started = agUi.filter((e) => e.type === "TEXT_MESSAGE_START").map((e) => e.messageId);
    expect(started).toHaveLength(2);
    const withdrawn = agUi.find((e) => e.type === "CUSTOM" && e.name === "stepwise.agent.withdrawn");
    expect(withdrawn?.value).toMatchObject({ messageId: started[0], agent: "router" });
    // What a client keeps once it drops the withdrawn message: only the retried reply's text.
    const kept = agUi
      .filter((e) => e.type === "TEXT_MESSAGE_CONTENT" && e.messageId !== (withdrawn?.value as { messageId: string }).messageId)
      .map((e) => e.delta)
      .join("");
    expect(kept).toBe("The whole answer.");
  });

  it("shows each retry as an activity: the attempt, the reason and the wait", async () => {
    const { agUi } = requested(RETRIED, "input-6");
    expect(agUi.filter((e) => e.type === "ACTIVITY_SNAPSHOT")).toEqual([
      {
        type: "ACTIVITY_SNAPSHOT",
        messageId: "run_t:model-wait:router",
        activityType: "model_retry",
        content: { agent: "router", attempt: 1, retries: 3, reason: "the reply broke off (terminated)", waitMs: 500 },
      },
    ]);
  });
});
