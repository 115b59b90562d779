import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTable } from "../../../../functions/awsClients.js";
import { ensureTable, startDynamo } from "../../../../infra/local/dynamo.js";
import type { EventBody } from "../../../../shared/contracts/events.js";
import { EventLog } from "../../../../shared/store/events.js";
import { keys } from "../../../../shared/store/keys.js";
import type { Table } from "../../../../shared/store/table.js";
import { TEST_CREDENTIALS } from "../../../support/dynalite.js";

/**
 * The event log against dynalite (DynamoDB's wire protocol): two logs stand for two Lambdas
 * appending to one run at once, each with its own idea of where the log ends.
 */

let dynamo: Awaited<ReturnType<typeof startDynamo>>;
let table: Table;

beforeAll(async () => {
  dynamo = await startDynamo({ credentials: TEST_CREDENTIALS });
  const config = { endpoint: dynamo.endpoint, region: "us-east-1", credentials: TEST_CREDENTIALS };
  await ensureTable(new DynamoDBClient(config), "events-test");
  table = connectTable("events-test", config);
});

afterAll(async () => {
  await dynamo?.close();
});

const thought = (writer: string, i: number): EventBody => ({
  type: "agent.thought",
  data: { agent: "executor", taskId: writer, text: `${writer}-${i}` },
});

describe("EventLog", () => {
  it("two writers appending at once get one gap-free sequence, each writer's events in its own order", async () => {
    const [a, b] = [new EventLog(table, 1), new EventLog(table, 1)];
    const writes = [];
    for (let i = 0; i < 15; i++) {
      writes.push(a.append("run_gapfree", [thought("a", i)]));
      writes.push(b.append("run_gapfree", [thought("b", 2 * i), thought("b", 2 * i + 1)]));
    }
    const appended = (await Promise.all(writes)).flat();
    const listed = await new EventLog(table, 1).list("run_gapfree", 0, 1_000);
    expect(listed.map((e) => e.seq)).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
    expect(appended.map((e) => e.seq).sort((x, y) => x - y)).toEqual(listed.map((e) => e.seq));
    const textsOf = (writer: string) =>
      listed.filter((e) => e.type === "agent.thought" && e.data.taskId === writer).map((e) => (e.data as { text: string }).text);
    expect(textsOf("a")).toEqual(Array.from({ length: 15 }, (_, i) => `a-${i}`));
    expect(textsOf("b")).toEqual(Array.from({ length: 30 }, (_, i) => `b-${i}`));
    // Listing from the middle of an item that holds several events starts right after `after`.
    expect((await a.list("run_gapfree", 20, 5)).map((e) => e.seq)).toEqual([21, 22, 23, 24, 25]);
  });

  it("the terminal event closes the log: a later append from another writer is dropped, the terminal event stays last", async () => {
    const [a, b] = [new EventLog(table, 1), new EventLog(table, 1)];
    await b.append("run_closed", [thought("b", 0)]); // b now believes the log ends at 1
    await a.append("run_closed", [thought("a", 0)]);
    const [terminal] = await a.append("run_closed", [{ type: "run.cancelled", data: { reason: "cancelled" } }], { close: true });
    expect(terminal!.seq).toBe(3);
    expect(await b.append("run_closed", [thought("b", 1)])).toEqual([]);
    const listed = await a.list("run_closed");
    expect(listed.map((e) => `${e.seq}:${e.type}`)).toEqual(["1:agent.thought", "2:agent.thought", "3:run.cancelled"]);
    expect(await new EventLog(table, 1).tip("run_closed")).toEqual({ seq: 3, closed: true });
  });

  it("an event with text too large for an item is cut with a note, and numbering goes on", async () => {
    const log = new EventLog(table, 1);
    const [big] = await log.append("run_big", [{ type: "agent.delta", data: { agent: "react", text: "x".repeat(500_000) } }]);
    const [next] = await log.append("run_big", [thought("a", 1)]);
    expect((big!.data as { text: string }).text).toContain("more bytes, kept with the run");
    expect([big!.seq, next!.seq]).toEqual([1, 2]);
    expect((await log.list("run_big")).map((e) => e.seq)).toEqual([1, 2]);
  });

  it("a keyed append whose number was recorded but whose item was never written (a crash between them) is appended by the retry, once", async () => {
    const log = new EventLog(table, 1);
    await log.append("run_torn", [thought("a", 0)]);
    // What a writer that died after recording the number it took (1, since taken by another) left behind.
    await table.putItem({ Item: { ...keys.eventKey("run_torn", "call_1:a.md"), first: 1 } });
    const created: EventBody = {
      type: "file.created",
      data: { name: "a.md", contentType: "text/markdown", bytes: 1, description: "", download: "/f" },
    };
    expect((await new EventLog(table, 1).append("run_torn", [created], { key: "call_1:a.md" })).map((e) => e.seq)).toEqual([2]);
    expect(await new EventLog(table, 1).append("run_torn", [created], { key: "call_1:a.md" })).toEqual([]);
    expect((await log.list("run_torn")).map((e) => `${e.seq}:${e.type}`)).toEqual(["1:agent.thought", "2:file.created"]);
  });

  it("many writers, each its own container: one counter update and one put per append, no put refused, one gap-free sequence", async () => {
    const config = { endpoint: dynamo.endpoint, region: "us-east-1", credentials: TEST_CREDENTIALS };
    const sent: string[] = [];
    const writers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const own = connectTable("events-test", config);
        (await own.client()).middlewareStack.add((next, context) => async (args) => {
          sent.push(context.commandName ?? "");
          return next(args);
        });
        return new EventLog(own, 1);
      }),
    );
    // Twenty executors append five times each, all at once, each waiting for its last append.
    await Promise.all(
      writers.map(async (log, w) => {
        for (let i = 0; i < 5; i++) await log.append("run_many", [thought(`w${w}`, i)]);
      }),
    );
    const listed = await new EventLog(table, 1).list("run_many", 0, 1_000);
    expect(listed.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    for (let w = 0; w < 20; w++)
      expect(
        listed.filter((e) => e.type === "agent.thought" && e.data.taskId === `w${w}`).map((e) => (e.data as { text: string }).text),
      ).toEqual([0, 1, 2, 3, 4].map((i) => `w${w}-${i}`));
    expect(sent.filter((c) => c === "PutItemCommand")).toHaveLength(100);
    expect(sent.filter((c) => c === "UpdateItemCommand")).toHaveLength(100);
    expect(sent.filter((c) => c !== "PutItemCommand" && c !== "UpdateItemCommand")).toEqual([]);
  });

  it("a number taken by a writer that stopped before writing it: readers show nothing past it, then fill it once later events are old enough, all alike", async () => {
    const log = new EventLog(table, 1);
    await log.append("run_hole", [thought("a", 0)]);
    // A writer takes number 2 and stops before its put.
    await table.updateItem({
      Key: keys.eventCounter("run_hole"),
      UpdateExpression: "ADD seq :one",
      ExpressionAttributeValues: { ":one": 1 },
    });
    await log.append("run_hole", [thought("a", 1), thought("a", 2)]);
    // Readers wait for number 2 before they show 3 and 4: listing and tip say so.
    expect((await new EventLog(table, 1).list("run_hole")).map((e) => e.seq)).toEqual([1]);
    expect((await new EventLog(table, 1).list("run_hole", 1)).map((e) => e.seq)).toEqual([]);
    expect(await log.tip("run_hole")).toEqual({ seq: 4, closed: false });
    // A reader for whom the later events are old enough fills 2; every reader then reads the same.
    const filled = await new EventLog(table, 1, { fillAfterMs: 0 }).list("run_hole");
    expect(filled.map((e) => `${e.seq}:${e.type}`)).toEqual(["1:agent.thought", "2:run.resumed", "3:agent.thought", "4:agent.thought"]);
    expect(await new EventLog(table, 1).list("run_hole")).toEqual(filled);
    expect(await new EventLog(table, 1).list("run_hole", 1, 2)).toEqual(filled.slice(1, 3));
  });

  it("after a restart, with no writer running, every number taken and never written is filled at once", async () => {
    const log = new EventLog(table, 1);
    await log.append("run_restart", [thought("a", 0), thought("a", 1)]); // one item holding 1 and 2
    await table.updateItem({
      Key: keys.eventCounter("run_restart"),
      UpdateExpression: "ADD seq :two",
      ExpressionAttributeValues: { ":two": 2 },
    });
    await log.append("run_restart", [thought("a", 2)]); // 5; 3 and 4 were taken by a writer that stopped
    expect((await log.list("run_restart")).map((e) => e.seq)).toEqual([1, 2]);
    await new EventLog(table, 1).fillLost("run_restart");
    expect((await log.list("run_restart")).map((e) => `${e.seq}:${e.type}`)).toEqual([
      "1:agent.thought",
      "2:agent.thought",
      "3:run.resumed",
      "4:run.resumed",
      "5:agent.thought",
    ]);
  });

  it("a put whose answer was lost and which the SDK sends again counts once: the writer finds its own item", async () => {
    const config = { endpoint: dynamo.endpoint, region: "us-east-1", credentials: TEST_CREDENTIALS };
    const flaky = connectTable("events-test", config);
    let lost = 0;
    // Below the SDK's retries: the first put reaches the table, then its connection "resets".
    (await flaky.client()).middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === "PutItemCommand" && lost++ === 0)
          throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET", $metadata: {} });
        return result;
      },
      { step: "deserialize" },
    );
    const appended = await new EventLog(flaky, 1).append("run_lost_answer", [thought("a", 0)]);
    expect(lost).toBe(2); // the put was sent twice
    expect(appended.map((e) => e.seq)).toEqual([1]);
    await new EventLog(table, 1).append("run_lost_answer", [thought("b", 0)]);
    expect(
      (await new EventLog(table, 1).list("run_lost_answer")).map((e) => `${e.seq}:${"taskId" in e.data ? e.data.taskId : ""}`),
    ).toEqual(["1:a", "2:b"]);
  });

  it("a writer too slow to write its number before a reader filled it appends again at a new number: its events once, after what was shown", async () => {
    const config = { endpoint: dynamo.endpoint, region: "us-east-1", credentials: TEST_CREDENTIALS };
    const slowTable = connectTable("events-test", config);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    (await slowTable.client()).middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === "PutItemCommand" && !held) {
        held = true;
        await released;
      }
      return next(args);
    });
    const [slow, fast] = [new EventLog(slowTable, 1), new EventLog(table, 1)];
    const late = slow.append("run_slow", [thought("slow", 0)]); // takes 1, its put held
    while (!held) await new Promise((resolve) => setTimeout(resolve, 5));
    await fast.append("run_slow", [thought("fast", 0)]); // 2
    expect(await fast.list("run_slow")).toEqual([]);
    expect((await new EventLog(table, 1, { fillAfterMs: 0 }).list("run_slow")).map((e) => `${e.seq}:${e.type}`)).toEqual([
      "1:run.resumed",
      "2:agent.thought",
    ]);
    release();
    expect((await late).map((e) => e.seq)).toEqual([3]);
    const listed = await fast.list("run_slow");
    expect(listed.map((e) => `${e.seq}:${e.type}:${e.type === "agent.thought" ? e.data.taskId : ""}`)).toEqual([
      "1:run.resumed:",
      "2:agent.thought:fast",
      "3:agent.thought:slow",
    ]);
  });

  it("a terminal append whose writer stopped after taking its number: the log reads open before it, and ending the run again writes it, once, last", async () => {
    const log = new EventLog(table, 1);
    await log.append("run_lost_end", [thought("a", 0)]);
    // The writer of the terminal event closed the counter at 2 and stopped before its put.
    await table.updateItem({
      Key: keys.eventCounter("run_lost_end"),
      UpdateExpression: "SET seq = :two, closed = :true, closedAt = :two",
      ExpressionAttributeValues: { ":two": 2, ":true": true },
    });
    expect(await log.append("run_lost_end", [thought("a", 1)])).toEqual([]);
    expect(await new EventLog(table, 1).tip("run_lost_end")).toEqual({ seq: 1, closed: false });
    const ended: EventBody = { type: "run.cancelled", data: { reason: "cancelled" } };
    expect((await new EventLog(table, 1).append("run_lost_end", [ended], { close: true })).map((e) => e.seq)).toEqual([2]);
    expect(await new EventLog(table, 1).append("run_lost_end", [ended], { close: true })).toEqual([]);
    expect((await log.list("run_lost_end")).map((e) => `${e.seq}:${e.type}`)).toEqual(["1:agent.thought", "2:run.cancelled"]);
    expect(await new EventLog(table, 1).tip("run_lost_end")).toEqual({ seq: 2, closed: true });
  });

  it("a log written before the counter (items, no counter) goes on after its last event", async () => {
    for (const seq of [1, 2, 3]) {
      await table.putItem({
        Item: { ...keys.event("run_old", seq), events: [{ ...thought("old", seq), seq, at: new Date().toISOString() }] },
      });
    }
    expect(await new EventLog(table, 1).tip("run_old")).toEqual({ seq: 3, closed: false });
    expect((await new EventLog(table, 1).append("run_old", [thought("new", 0)])).map((e) => e.seq)).toEqual([4]);
    expect((await new EventLog(table, 1).list("run_old")).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });
});

describe("EventLog with Chinese, Japanese or Korean text (3 bytes a character)", () => {
  it("batches events into items by their bytes, not characters: twelve events of 16,000 CJK characters are all stored", async () => {
    const log = new EventLog(table, 1);
    const runId = "run_cjk";
    const long = "数据分析报告".repeat(6_000); // 36,000 characters, 108,000 bytes; an event keeps 48,000 bytes of them
    const bodies: EventBody[] = Array.from({ length: 12 }, (_, i) => ({
      type: "agent.thought",
      data: { agent: "executor", taskId: `t${i}`, text: long },
    }));
    await log.append(runId, bodies);
    const stored = await log.list(runId, 0, 100);
    expect(stored.map((e) => e.seq)).toEqual(bodies.map((_, i) => i + 1));
    for (const event of stored) {
      const text = (event.data as { text: string }).text;
      expect(text).toBe(`${"数据分析报告".repeat(2_666)}数据分析… [60000 more bytes, kept with the run]`);
    }
    // DynamoDB refuses an item over 400 KB (dynalite does not check): each item stays well under it.
    const items = await table.queryPrefix<Record<string, unknown>>(keys.eventsPk(runId), keys.eventPrefix);
    expect(items.length).toBeGreaterThan(1);
    for (const item of items) expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThan(350_000);
  });
});
