import { describe, expect, it } from "vitest";
import type { EventBody } from "../../../../shared/contracts/events.js";
import type { RunEvents } from "../../../../shared/ports/events.js";
import { EventLog } from "../../../../shared/store/events.js";
import { MemoryEvents } from "../../../../shared/testing/memoryEvents.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The events port's contract, the same cases for the in-memory fake and the DynamoDB adapter. */

const dynamo = useDynalite();
const thought = (writer: string, i: number): EventBody => ({
  type: "agent.thought",
  data: { agent: "executor", taskId: writer, text: `${writer}-${i}` },
});

describe.each([
  // Two writers: two Lambdas appending to one run, each with its own idea of where the log ends.
  {
    name: "in memory",
    writers: (): [RunEvents, RunEvents] => {
      const log = new MemoryEvents();
      return [log, log];
    },
  },
  {
    name: "DynamoDB adapter on dynalite",
    writers: (): [RunEvents, RunEvents] => [new EventLog(dynamo.table(), 1), new EventLog(dynamo.table(), 1)],
  },
])("events port: $name", ({ writers }) => {
  it("appends at once from two writers get one gap-free sequence, each writer's events in its own order", async () => {
    const [a, b] = writers();
    const runId = freshId("run");
    const writes = [];
    for (let i = 0; i < 6; i++)
      writes.push(a.append(runId, [thought("a", i)]), b.append(runId, [thought("b", 2 * i), thought("b", 2 * i + 1)]));
    const appended = (await Promise.all(writes)).flat();
    const listed = await a.list(runId, 0, 100);
    expect(listed.map((e) => e.seq)).toEqual(Array.from({ length: 18 }, (_, i) => i + 1));
    expect(appended.map((e) => e.seq).sort((x, y) => x - y)).toEqual(listed.map((e) => e.seq));
    const textsOf = (writer: string) =>
      listed.filter((e) => e.type === "agent.thought" && e.data.taskId === writer).map((e) => (e.data as { text: string }).text);
    expect(textsOf("a")).toEqual(Array.from({ length: 6 }, (_, i) => `a-${i}`));
    expect(textsOf("b")).toEqual(Array.from({ length: 12 }, (_, i) => `b-${i}`));
    expect((await b.list(runId, 10, 3)).map((e) => e.seq)).toEqual([11, 12, 13]);
    expect(await b.tip(runId)).toEqual({ seq: 18, closed: false });
  });

  it("the terminal event closes the log: a later append from another writer is dropped, the terminal event stays last", async () => {
    const [a, b] = writers();
    const runId = freshId("run");
    await b.append(runId, [thought("b", 0)]);
    await a.append(runId, [thought("a", 0)]);
    const [terminal] = await a.append(runId, [{ type: "run.cancelled", data: { reason: "cancelled" } }], { close: true });
    expect(terminal!.seq).toBe(3);
    expect(await b.append(runId, [thought("b", 1)])).toEqual([]);
    expect((await a.list(runId)).map((e) => `${e.seq}:${e.type}`)).toEqual(["1:agent.thought", "2:agent.thought", "3:run.cancelled"]);
    expect(await b.tip(runId)).toEqual({ seq: 3, closed: true });
  });

  it("an event written after the end (reopen and close, with a key) lands once after the terminal event, and the log stays closed", async () => {
    const [a, b] = writers();
    const runId = freshId("run");
    await a.append(runId, [{ type: "run.cancelled", data: { reason: "cancelled" } }], { close: true });
    const scored: EventBody = {
      type: "eval.scored",
      data: { status: "skipped", reason: "cap", judges: [], usage: { promptTokens: 0, completionTokens: 0 }, costUsd: null, at: "x" },
    };
    expect((await b.append(runId, [scored], { reopen: true, close: true, key: "eval.scored" })).map((e) => e.seq)).toEqual([2]);
    expect(await a.append(runId, [scored], { reopen: true, close: true, key: "eval.scored" })).toEqual([]);
    expect(await a.append(runId, [thought("a", 0)])).toEqual([]);
    expect(await b.tip(runId)).toEqual({ seq: 2, closed: true });
    expect((await a.list(runId)).map((e) => e.type)).toEqual(["run.cancelled", "eval.scored"]);
  });

  it("an invalid event is refused and takes no number", async () => {
    const [a] = writers();
    const runId = freshId("run");
    await expect(a.append(runId, [{ type: "no.such.event", data: {} } as unknown as EventBody])).rejects.toThrow();
    const [next] = await a.append(runId, [thought("a", 0)]);
    expect(next!.seq).toBe(1);
    expect(await a.list(runId)).toHaveLength(1);
  });

  it("an append with a key happens once per run, whoever repeats it", async () => {
    const [a, b] = writers();
    const runId = freshId("run");
    const created = (name: string): EventBody => ({
      type: "file.created",
      data: { name, contentType: "text/markdown", bytes: 3, description: "", download: `/v1/runs/${runId}/files/${name}` },
    });
    expect((await a.append(runId, [created("a.md")], { key: "call_1:a.md" })).map((e) => e.seq)).toEqual([1]);
    await a.append(runId, [thought("a", 0)]);
    expect(await b.append(runId, [created("a.md")], { key: "call_1:a.md" })).toEqual([]);
    expect(await a.append(runId, [created("a.md")], { key: "call_1:a.md" })).toEqual([]);
    // Another run, or another key, is another append.
    expect((await b.append(runId, [created("a.md")], { key: "call_2:a.md" })).map((e) => e.seq)).toEqual([3]);
    expect((await b.append(freshId("run"), [created("a.md")], { key: "call_1:a.md" })).map((e) => e.seq)).toEqual([1]);
    expect((await a.list(runId)).map((e) => e.type)).toEqual(["file.created", "agent.thought", "file.created"]);
  });
});
