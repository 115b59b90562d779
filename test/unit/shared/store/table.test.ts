import { beforeEach, describe, expect, it, vi } from "vitest";
import { ScopeJournal } from "../../../../shared/agent/scopeJournal.js";
import { Journal } from "../../../../shared/store/journal.js";
import { RunStore } from "../../../../shared/store/runs.js";
import { Table } from "../../../../shared/store/table.js";
import { TaskStore } from "../../../../shared/store/tasks.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";
import { runRecord } from "../../../support/records.js";

/**
 * Parallel executors of one step start together, read the same items and flush their journals at
 * about the same time: the reads and writes asked for in one turn of the event loop share requests
 * (on dynalite, counted at the client), and each caller still gets exactly what it would have alone.
 */

const dynamo = useDynalite();
const sent = new Map<string, number>();
let counting = false;

beforeEach(async () => {
  sent.clear();
  if (counting) return;
  counting = true;
  (await dynamo.table().client()).middlewareStack.add(
    (next, context) => async (args) => {
      sent.set(context.commandName!, (sent.get(context.commandName!) ?? 0) + 1);
      return next(args);
    },
    { step: "initialize", name: "countRequests" },
  );
});

async function stepWithTasks(taskCount: number) {
  const table = dynamo.table();
  const runs = new RunStore(table, 1);
  const tasks = new TaskStore(table, 1);
  const journal = new Journal(table, 1);
  const runId = freshId("run");
  await runs.create(runRecord(runId, { status: "running" }));
  const taskIds = Array.from({ length: taskCount }, (_, i) => `s1.t${i + 1}`);
  const step = {
    iteration: 0,
    stepIndex: 0,
    tenantId: "t",
    request: "Compute",
    priorResults: [],
    maxRounds: 5,
    tasks: taskIds.map((taskId) => ({ taskId, title: taskId, text: taskId })),
  };
  // t1 and t10 have records: a prefix of one scope must not hand its records to the other.
  const t1 = await ScopeJournal.load(journal, runId, "task#0#s1.t1");
  const t10 = await ScopeJournal.load(journal, runId, "task#0#s1.t10");
  await t1.once(0, "llm", "", async () => ({ content: "from t1" }), { defer: true });
  await t10.once(0, "llm", "", async () => ({ content: "from t10" }), { defer: true });
  await Promise.all([t1.flush({ step }), t10.flush()]);
  return { runs, tasks, journal, runId, taskIds };
}

describe("reads asked for together", () => {
  it("16 executors starting a step read the step, the run's status and their journals with 2 requests, each getting its own", async () => {
    const { tasks, journal, runId, taskIds } = await stepWithTasks(16);
    sent.clear();
    const starts = await Promise.all(
      taskIds.map((taskId) => Promise.all([tasks.stepAndRunStatus(runId, 0), ScopeJournal.load(journal, runId, `task#0#${taskId}`)])),
    );
    expect(Object.fromEntries(sent)).toEqual({ BatchGetItemCommand: 1, QueryCommand: 1 });
    for (const [[{ step, status }, own], taskId] of starts.map((start, i) => [start, taskIds[i]] as const)) {
      expect(status).toBe("running");
      expect(step?.tasks).toHaveLength(16);
      const expected = taskId === "s1.t1" ? "from t1" : taskId === "s1.t10" ? "from t10" : undefined;
      expect(own.size).toBe(expected ? 1 : 0);
      if (expected) expect(own.get(0, "llm")).toEqual({ content: expected });
    }
  });

  it("agents checking the run's status at the same time share a request, and see a change made before they asked", async () => {
    const { runs, runId } = await stepWithTasks(2);
    sent.clear();
    expect(await Promise.all([runs.status(runId), runs.status(runId), runs.status(runId)])).toEqual(["running", "running", "running"]);
    expect(sent.get("BatchGetItemCommand")).toBe(1);
    expect(await runs.end(runId, { status: "cancelled" }, ["running"])).toMatchObject({ status: "cancelled" });
    expect(await Promise.all([runs.status(runId), runs.status(runId)])).toEqual(["cancelled", "cancelled"]);
    expect(await runs.status(freshId("run"))).toBeUndefined();
  });

  it("scopes of different families, or of different runs, are each read with their own prefix", async () => {
    const { journal, runId } = await stepWithTasks(1);
    const other = await stepWithTasks(1);
    const react = await ScopeJournal.load(journal, runId, "react");
    await react.once(0, "llm", "", async () => ({ content: "react" }));
    sent.clear();
    const [reactAgain, summary, t1, otherT1] = await Promise.all([
      ScopeJournal.load(journal, runId, "react"),
      ScopeJournal.load(journal, runId, "summary"),
      ScopeJournal.load(journal, runId, "task#0#s1.t1"),
      ScopeJournal.load(journal, other.runId, "task#0#s1.t1"),
    ]);
    expect(sent.get("QueryCommand")).toBe(4);
    expect(reactAgain.get(0, "llm")).toEqual({ content: "react" });
    expect(summary.size).toBe(0);
    expect(t1.get(0, "llm")).toEqual({ content: "from t1" });
    expect(otherT1.get(0, "llm")).toEqual({ content: "from t1" });
  });
});

describe("writes asked for together", () => {
  const item = (runId: string, sk: string, value: unknown) => ({ PutRequest: { Item: { pk: `RUN#${runId}#T`, sk, value } } });

  it("16 journal flushes in one turn are written with one request per 25 items, every record readable after", async () => {
    const { journal, runId, taskIds } = await stepWithTasks(16);
    const scopes = await Promise.all(taskIds.map((taskId) => ScopeJournal.load(journal, runId, `task#0#${taskId}`)));
    for (const [i, scope] of scopes.entries()) {
      await scope.once(1, "llm", "", async () => ({ content: `round 1 of ${i}` }), { defer: true });
      await scope.once(1, "tool", "call_1", async () => ({ ok: true, output: `${i}` }), { defer: true });
    }
    sent.clear();
    await Promise.all(scopes.map((scope) => scope.flush()));
    expect(Object.fromEntries(sent)).toEqual({ BatchWriteItemCommand: 2 }); // 32 records, 16 callers
    const again = await Promise.all(taskIds.map((taskId) => ScopeJournal.load(journal, runId, `task#0#${taskId}`)));
    again.forEach((scope, i) => {
      expect(scope.get(1, "llm")).toEqual({ content: `round 1 of ${i}` });
      expect(scope.get(1, "tool", "call_1")).toEqual({ ok: true, output: `${i}` });
    });
  });

  it("writes to one key in one turn keep their order; a refused item fails only its own caller", async () => {
    const table = dynamo.table();
    const runId = freshId("run");
    await Promise.all([
      table.batchWrite([item(runId, "a", 1)]),
      table.batchWrite([item(runId, "a", 2), item(runId, "b", 1)]),
      table.batchWrite([{ DeleteRequest: { Key: { pk: `RUN#${runId}#T`, sk: "b" } } }]),
    ]);
    expect((await table.queryPrefix<{ sk: string; value: number }>(`RUN#${runId}#T`, "")).map(({ sk, value }) => [sk, value])).toEqual([
      ["a", 2],
    ]);

    const tooLarge = table.batchWrite([item(runId, "big", "x".repeat(410_000))]);
    const fine = table.batchWrite([item(runId, "c", 3)]);
    await expect(tooLarge).rejects.toThrow(/size/i);
    await expect(fine).resolves.toBeUndefined();
    expect((await table.queryPrefix<{ sk: string }>(`RUN#${runId}#T`, "")).map(({ sk }) => sk)).toEqual(["a", "c"]);
  });
});

describe("a busy table (what DynamoDB hands back unprocessed)", () => {
  // dynalite always processes everything: a stand-in for DynamoDB under load answers here instead.
  const busyTable = (unprocessedTimes: number) => {
    const calls: string[] = [];
    const doc = {
      async send(command: { constructor: { name: string }; input: any }) {
        const { RequestItems } = command.input;
        const [name] = Object.keys(RequestItems);
        calls.push(command.constructor.name);
        const busy = calls.length <= unprocessedTimes;
        if (command.constructor.name === "BatchGetCommand") {
          const { Keys } = RequestItems[name];
          return busy
            ? { Responses: { [name]: [] }, UnprocessedKeys: { [name]: { Keys } } }
            : { Responses: { [name]: Keys.map((k: any) => ({ ...k, value: 1 })) } };
        }
        return busy ? { UnprocessedItems: { [name]: RequestItems[name] } } : {};
      },
    };
    return { table: new Table(async () => doc as any, "busy-table"), calls };
  };

  it("reads and writes left unprocessed are sent again until DynamoDB takes them", async () => {
    const { table, calls } = busyTable(2);
    expect(await table.getConsistent({ pk: "RUN#a", sk: "META" })).toEqual({ pk: "RUN#a", sk: "META", value: 1 });
    expect(calls).toEqual(["BatchGetCommand", "BatchGetCommand", "BatchGetCommand"]);
    const writes = busyTable(2);
    await writes.table.batchWrite([{ PutRequest: { Item: { pk: "RUN#a", sk: "J#1" } } }]);
    expect(writes.calls).toHaveLength(3);
  });

  it("a read or a write still unprocessed after 8 attempts fails, saying so", async () => {
    vi.useFakeTimers();
    try {
      const read = busyTable(Number.POSITIVE_INFINITY);
      const reading = expect(read.table.getConsistent({ pk: "RUN#a", sk: "META" })).rejects.toThrow(
        "BatchGetItem left 1 item(s) unprocessed after 8 attempts",
      );
      const write = busyTable(Number.POSITIVE_INFINITY);
      const writing = expect(write.table.batchWrite([{ PutRequest: { Item: { pk: "RUN#a", sk: "J#1" } } }])).rejects.toThrow(
        "BatchWriteItem left 1 item(s) unprocessed after 8 attempts",
      );
      await vi.runAllTimersAsync();
      await Promise.all([reading, writing]);
      expect(read.calls).toHaveLength(8);
      expect(write.calls).toHaveLength(8);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("the client, made on the first request", () => {
  it("is not made until a request needs it, and a load that failed is tried again by the next request", async () => {
    const real = dynamo.table();
    let loads = 0;
    const table = new Table(async () => {
      loads++;
      if (loads === 1) throw new Error("the SDK did not load");
      return real.client();
    }, real.name);
    const runs = new RunStore(table, 1);
    expect(loads).toBe(0);
    const runId = freshId("run");
    await expect(runs.create(runRecord(runId))).rejects.toThrow("the SDK did not load");
    expect(await runs.create(runRecord(runId))).toBe(true);
    expect(await runs.get(runId)).toMatchObject({ runId });
    expect(loads).toBe(2);
  });
});
