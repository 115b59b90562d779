import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { endedBlocks, foldRun, foldRunEvents, openBlock, textSource } from "../../../../shared/apiClient/runFold.js";
import type { EventBody, RunEvent } from "../../../../shared/contracts/events.js";

const at = (seq: number) => new Date(Date.UTC(2026, 10, 27, 0, 0, seq)).toISOString();
const log = (bodies: EventBody[]): RunEvent[] => bodies.map((body, i) => ({ ...body, seq: i + 1, at: at(i + 1) }) as RunEvent);

const delta = (agent: string, text: string, taskId?: string): EventBody => ({
  type: "agent.delta",
  data: { agent: agent as "react", text, ...(taskId ? { taskId } : {}) },
});

describe("the fold of a run's events", () => {
  it("gathers each agent's deltas into one block, apart from other agents and tasks, until it does something else", () => {
    const run = foldRunEvents(log([delta("executor", "17*", "t1"), delta("executor", "47", "t2"), delta("executor", "23 = 391", "t1")]));
    expect([...run.blocks.values()].map((b) => [b.source.taskId, b.text, b.startSeq, b.seqs])).toEqual([
      ["t1", "17*23 = 391", 1, [1, 3]],
      ["t2", "47", 2, [2]],
    ]);
    const after = foldRun(run, {
      type: "agent.thought",
      data: { agent: "executor", taskId: "t1", text: "17*23 = 391" },
      seq: 4,
      at: at(4),
    });
    // The thought repeats the block it ends: a reader tells by the block open before it.
    expect(endedBlocks(run, after).map((b) => b.text)).toEqual(["17*23 = 391"]);
    expect(openBlock(after, "text", { agent: "executor", taskId: "t2" })?.text).toBe("47");
  });

  it("ends reasoning at the reply's first piece of text, and a task's text when the task completes", () => {
    const run = foldRunEvents(
      log([
        { type: "agent.reasoning", data: { agent: "executor", taskId: "t1", text: "Think. " } },
        { type: "agent.reasoning", data: { agent: "executor", taskId: "t1", text: "More." } },
        delta("executor", "Answer", "t1"),
      ]),
    );
    expect([...run.blocks.values()].map((b) => [b.kind, b.text])).toEqual([["text", "Answer"]]);
    const done = foldRun(run, {
      type: "task.completed",
      data: { taskId: "t1", title: "x", iteration: 0, status: "succeeded", result: "Answer" },
      seq: 4,
      at: at(4),
    });
    expect(done.blocks.size).toBe(0);
    expect(done.tasks.get("0:t1")).toMatchObject({ status: "succeeded", result: "Answer", endedAt: at(4) });
    expect(done.tasks.get("0:t1")).not.toHaveProperty("undone");
    // A task whose call a person declined keeps which one: readers show it as not done.
    const undone = [{ tool: "write_artifact", decision: "reject" as const }];
    const declined = foldRun(done, {
      type: "task.completed",
      data: { taskId: "t2", title: "y", iteration: 0, status: "succeeded", result: "Rejected by the user.", undone },
      seq: 5,
      at: at(5),
    });
    expect(declined.tasks.get("0:t2")).toMatchObject({ status: "succeeded", undone });
  });

  it("follows tasks, tool calls, their code, reports and results, files, pauses and the run's end", () => {
    const run = foldRunEvents(
      log([
        { type: "run.queued_behind", data: { runId: "r2", activeRunId: "r1", position: 1 } },
        { type: "run.started", data: { mode: "plan_solve", input: "Sum it" } },
        { type: "task.started", data: { taskId: "t1", title: "Sum", iteration: 0, stepIndex: 0 } },
        { type: "tool.called", data: { agent: "executor", taskId: "t1", callId: "c1", tool: "run_code", arguments: { code: "1+1" } } },
        { type: "code", data: { agent: "executor", taskId: "t1", callId: "c1", part: "source", language: "python", text: "1+1" } },
        { type: "code", data: { agent: "executor", taskId: "t1", callId: "c1", part: "output", language: "python", text: "2", ok: true } },
        { type: "tool.result", data: { agent: "executor", taskId: "t1", callId: "c1", tool: "run_code", ok: true, output: "2" } },
        { type: "report.delta", data: { agent: "executor", taskId: "t1", callId: "c2", name: "r.md", format: "markdown", text: "# R" } },
        { type: "report.delta", data: { agent: "executor", taskId: "t1", callId: "c2", name: "r.md", format: "markdown", text: "\nok" } },
        { type: "interrupt.opened", data: { interruptId: "i1", kind: "tool_approval", summary: "write?", toolName: "write_artifact" } },
      ]),
    );
    expect(run).toMatchObject({ status: "awaiting_input", mode: "plan_solve", input: "Sum it", queuedBehind: undefined });
    expect(run.tasks.get("0:t1")).toMatchObject({ status: "running", startedAt: at(3), stepIndex: 0 });
    expect(run.calls.get("c1")).toMatchObject({
      tool: "run_code",
      code: { language: "python", text: "1+1", output: { text: "2", ok: true } },
      result: { ok: true, output: "2" },
    });
    expect(run.calls.get("c2")?.reports).toEqual({ "r.md": { format: "markdown", text: "# R\nok" } });
    expect([...run.pending.keys()]).toEqual(["i1"]);

    const ended = foldRunEvents(
      [
        { type: "interrupt.resolved", data: { interruptId: "i1", kind: "tool_approval", decision: "approve" }, seq: 11, at: at(11) },
        {
          type: "file.created",
          data: { name: "r.md", contentType: "text/markdown", bytes: 6, description: "", download: "/f", taskId: "t1" },
          seq: 12,
          at: at(12),
        },
        { type: "run.succeeded", data: { result: "2", files: ["r.md"] }, seq: 13, at: at(13) },
      ],
      run,
    );
    expect(ended).toMatchObject({ status: "succeeded", result: "2", resultFiles: ["r.md"], seq: 13 });
    expect(ended.pending.size).toBe(0);
    expect(ended.files.get("r.md")?.taskId).toBe("t1");
  });

  it("a withdrawn reply's text is gone, and a failed run resumed runs again", () => {
    const run = foldRunEvents(
      log([
        delta("router", '[{"name":"choose'),
        { type: "agent.withdrawn", data: { agent: "router", reason: "broke off" } },
        delta("router", "Whole."),
        { type: "run.failed", data: { error: { code: "model_error", message: "down" } } },
      ]),
    );
    expect(run).toMatchObject({ status: "failed", error: { code: "model_error" } });
    expect(run.blocks.size).toBe(0);
    const resumed = foldRun(run, { type: "run.resumed", data: { redrive: true }, seq: 5, at: at(5) });
    expect(resumed.status).toBe("running");
    expect(resumed.error).toBeUndefined();
  });

  it("ignores a type it does not know (it advances the sequence only), and an event it has folded already", () => {
    const run = foldRunEvents(log([delta("react", "Hi")]));
    const unknown = { type: "agent.mood", data: { agent: "react", mood: "calm" }, seq: 2, at: at(2) } as unknown as RunEvent;
    expect(foldRun(run, unknown)).toEqual({ ...run, seq: 2 });
    expect(foldRun(run, { type: "agent.delta", data: { agent: "react", text: "Hi" }, seq: 1, at: at(1) })).toBe(run);
  });

  it("finds the agent (and task) an event's data names", () => {
    expect(textSource({ agent: "executor", taskId: "t1", text: "x" })).toEqual({ agent: "executor", taskId: "t1" });
    expect(textSource({ taskId: "t1" })).toBeUndefined();
    expect(textSource(null)).toBeUndefined();
  });
});

/** Any log a run may write: the contract's types, a few agents, tasks and calls, in any order. */
const source = fc.record({ agent: fc.constantFrom("react", "executor", "summarizer"), taskId: fc.constantFrom(undefined, "t1", "t2") });
const callId = fc.constantFrom("c1", "c2", "c3");
const body: fc.Arbitrary<EventBody | { type: string; data: unknown }> = fc.oneof(
  fc.record({ type: fc.constant("agent.delta"), data: fc.record({ text: fc.string({ maxLength: 4 }) }) }),
  fc.record({ type: fc.constant("agent.reasoning"), data: fc.record({ text: fc.string({ maxLength: 4 }) }) }),
  fc.record({ type: fc.constant("agent.thought"), data: fc.record({ text: fc.string({ maxLength: 4 }) }) }),
  fc.record({ type: fc.constant("agent.withdrawn"), data: fc.record({ reason: fc.constant("broke off") }) }),
  fc.record({ type: fc.constant("tool.called"), data: fc.record({ callId, tool: fc.constant("calculator"), arguments: fc.constant({}) }) }),
  fc.record({
    type: fc.constant("tool.result"),
    data: fc.record({ callId, tool: fc.constant("calculator"), ok: fc.boolean(), output: fc.string({ maxLength: 4 }) }),
  }),
  fc.record({
    type: fc.constant("report.delta"),
    data: fc.record({ callId, name: fc.constant("r.md"), format: fc.constant("markdown"), text: fc.string({ maxLength: 4 }) }),
  }),
  fc.record({
    type: fc.constant("task.started"),
    data: fc.record({ taskId: fc.constantFrom("t1", "t2"), title: fc.constant("x"), iteration: fc.nat(1), stepIndex: fc.constant(0) }),
  }),
  fc.record({
    type: fc.constant("task.completed"),
    data: fc.record({
      taskId: fc.constantFrom("t1", "t2"),
      title: fc.constant("x"),
      iteration: fc.nat(1),
      status: fc.constantFrom("succeeded" as const, "failed" as const),
      result: fc.constant("r"),
    }),
  }),
  fc.record({
    type: fc.constant("interrupt.opened"),
    data: fc.record({ interruptId: fc.constantFrom("i1", "i2"), kind: fc.constant("ask_user"), summary: fc.constant("?") }),
  }),
  fc.record({
    type: fc.constant("interrupt.resolved"),
    data: fc.record({ interruptId: fc.constantFrom("i1", "i2"), kind: fc.constant("ask_user"), decision: fc.constant("answer") }),
  }),
  fc.record({ type: fc.constant("run.succeeded"), data: fc.record({ result: fc.constant("done"), files: fc.constant([]) }) }),
  fc.record({ type: fc.constant("run.resumed"), data: fc.record({ redrive: fc.boolean() }) }),
  fc.record({ type: fc.constantFrom("agent.mood", "run.paused"), data: fc.constant({ note: "from a newer server" }) }),
);
const events = fc
  .array(fc.tuple(body, source), { maxLength: 40 })
  .map((items) =>
    items.map(([b, s], i) => ({ type: b.type, data: { ...s, ...(b.data as object) }, seq: i + 1, at: at(i + 1) }) as RunEvent),
  );

describe("the fold, for any log", () => {
  it("folding a prefix and then the rest is folding the whole", () => {
    fc.assert(
      fc.property(events, fc.nat(), (all, cut) => {
        const at = all.length === 0 ? 0 : cut % (all.length + 1);
        expect(foldRunEvents(all.slice(at), foldRunEvents(all.slice(0, at)))).toEqual(foldRunEvents(all));
      }),
    );
  });

  it("an event delivered again (a stream resumed) changes nothing, and the fold never changes the run it was given", () => {
    fc.assert(
      fc.property(events, (all) => {
        const whole = foldRunEvents(all);
        const repeated = all.flatMap((event, i) => (i % 2 === 0 ? [event, event] : [event]));
        expect(foldRunEvents(repeated)).toEqual(whole);
        const before = foldRunEvents(all.slice(0, -1));
        const snapshot = structuredClone(before);
        if (all.length > 0) foldRun(before, all.at(-1) as RunEvent);
        expect(before).toEqual(snapshot);
      }),
    );
  });

  it("events of types it does not know change nothing but the sequence number", () => {
    const unknown = new Set(["agent.mood", "run.paused"]);
    fc.assert(
      fc.property(events, (all) => {
        const known = all.filter((e) => !unknown.has(e.type));
        const whole = foldRunEvents(all);
        expect({ ...foldRunEvents(known), seq: whole.seq }).toEqual(whole);
      }),
    );
  });

  it("a block holds exactly the text of the events that carried it, and an empty piece opens none", () => {
    fc.assert(
      fc.property(events, (all) => {
        const run = foldRunEvents(all);
        for (const block of run.blocks.values()) {
          const pieces = block.seqs.map((seq) => (all[seq - 1].data as { text: string }).text);
          expect(pieces.join("")).toBe(block.text);
          expect(pieces.every((piece) => piece !== "")).toBe(true);
          expect(block.startSeq).toBe(block.seqs[0]);
        }
      }),
    );
  });
});
