import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTable, startDynamo } from "../../infra/local/dynamo.js";
import type { EventBody } from "../../shared/contracts/events.js";
import { EventLog } from "../../shared/store/events.js";
import { Table } from "../../shared/store/table.js";
import { keys } from "../../shared/store/keys.js";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { TEST_CREDENTIALS } from "../support/dynalite.js";

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
  table = Table.connect("events-test", config);
});

afterAll(async () => {
  await dynamo?.close();
});

const thought = (writer: string, i: number): EventBody => ({ type: "agent.thought", data: { agent: "executor", taskId: writer, text: `${writer}-${i}` } });

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
    const textsOf = (writer: string) => listed.filter((e) => e.type === "agent.thought" && e.data.taskId === writer).map((e) => (e.data as { text: string }).text);
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
    expect((big!.data as { text: string }).text).toContain("more characters, kept with the run");
    expect([big!.seq, next!.seq]).toEqual([1, 2]);
    expect((await log.list("run_big")).map((e) => e.seq)).toEqual([1, 2]);
  });

  it("a keyed append whose number was recorded but whose item was never written (a crash between them) is appended by the retry, once", async () => {
    const log = new EventLog(table, 1);
    await log.append("run_torn", [thought("a", 0)]);
    // What a writer that died after recording the number it took (1, since taken by another) left behind.
    await table.doc.send(new PutCommand({ TableName: "events-test", Item: { ...keys.eventKey("run_torn", "call_1:a.md"), first: 1 } }));
    const created: EventBody = { type: "file.created", data: { name: "a.md", contentType: "text/markdown", bytes: 1, description: "", download: "/f" } };
    expect((await new EventLog(table, 1).append("run_torn", [created], { key: "call_1:a.md" })).map((e) => e.seq)).toEqual([2]);
    expect(await new EventLog(table, 1).append("run_torn", [created], { key: "call_1:a.md" })).toEqual([]);
    expect((await log.list("run_torn")).map((e) => `${e.seq}:${e.type}`)).toEqual(["1:agent.thought", "2:file.created"]);
  });
});

