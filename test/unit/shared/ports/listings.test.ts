import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../../shared/errors.js";
import { cursorAt, type Listings } from "../../../../shared/ports/listings.js";
import type { Runs } from "../../../../shared/ports/runs.js";
import { keys, LISTING_SHARDS, listingShard } from "../../../../shared/store/keys.js";
import { ListingStore } from "../../../../shared/store/listings.js";
import { RunStore } from "../../../../shared/store/runs.js";
import { Table } from "../../../../shared/store/table.js";
import { MemoryListings } from "../../../../shared/testing/memoryListings.js";
import { MemoryRuns } from "../../../../shared/testing/memoryRuns.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";
import { runRecord } from "../../../support/records.js";

/** The listings port's contract (over the runs port, whose runs it lists): fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

/** Minute `m` of a fixed day, as run records carry their creation time. */
const at = (m: number) => new Date(Date.UTC(2026, 10, 27, 10, m)).toISOString();

/** A fresh run id whose listing item lands in `shard` (of the DynamoDB adapter's shards). */
function idInShard(shard: number, tag: string): string {
  for (;;) {
    const id = `${freshId("run")}_${tag}`;
    if (listingShard(id) === shard) return id;
  }
}

describe.each([
  {
    name: "in memory",
    make: (): { runs: Runs; listings: Listings } => {
      const runs = new MemoryRuns();
      return { runs, listings: new MemoryListings(runs) };
    },
  },
  {
    name: "DynamoDB adapter on dynalite",
    make: (): { runs: Runs; listings: Listings } => ({ runs: new RunStore(dynamo.table(), 1), listings: new ListingStore(dynamo.table()) }),
  },
])("listings port: $name", ({ make }) => {
  /** Five runs of one tenant (two sessions, one failed), one of another tenant. */
  async function fiveRuns() {
    const { runs, listings } = make();
    const [tenant, other] = [freshId("tenant"), freshId("tenant")];
    const ids = [0, 1, 2, 3, 4].map((i) => `${freshId("run")}_${i}`);
    for (const [i, runId] of ids.entries())
      await runs.create(
        runRecord(runId, {
          tenantId: tenant,
          createdAt: at(i),
          sessionId: i % 2 ? "odd" : "even",
          status: i === 3 ? "failed" : "succeeded",
        }),
      );
    await runs.create(runRecord(freshId("run"), { tenantId: other, createdAt: at(9) }));
    return { listings, tenant, ids };
  }

  it("lists a tenant's runs newest first, a page at a time, every run once, until a page without a cursor", async () => {
    const { listings, tenant, ids } = await fiveRuns();
    const first = await listings.runs(tenant, { limit: 2 });
    expect(first.items.map((r) => r.runId)).toEqual([ids[4], ids[3]]);
    const second = await listings.runs(tenant, { limit: 2, cursor: first.nextCursor });
    expect(second.items.map((r) => r.runId)).toEqual([ids[2], ids[1]]);
    const last = await listings.runs(tenant, { limit: 2, cursor: second.nextCursor });
    expect(last.items.map((r) => r.runId)).toEqual([ids[0]]);
    expect(last.nextCursor).toBeUndefined();
    // A full page may have a cursor with nothing behind it (DynamoDB cannot tell): it leads to an empty last page.
    const whole = await listings.runs(tenant, { limit: 5 });
    expect(whole.items).toHaveLength(5);
    if (whole.nextCursor) expect(await listings.runs(tenant, { limit: 5, cursor: whole.nextCursor })).toEqual({ items: [] });
    expect(first.items[0]).toMatchObject({ tenantId: tenant, sessionId: "even", status: "succeeded", input: "What is 2+2?" });
  });

  it("merges the shards newest first: a page may end inside a shard, ties go by run id, and every run comes once", async () => {
    const { runs, listings } = make();
    const tenant = freshId("tenant");
    // Newest first: r7 and r6 (one shard), r5, then r4 | r3 in one shard across the page boundary,
    // r2 and r1 created in the same millisecond in two shards, r0.
    const placed: [number, number][] = [
      [7, 0],
      [6, 0],
      [5, 1],
      [4, 2],
      [3, 2],
      [2, 3],
      [1, 4],
      [0, 1],
    ];
    const ids = placed.map(([i, shard]) => idInShard(shard, String(i)));
    const created = (i: number) => (i === 1 ? at(2) : at(i));
    for (const [i, runId] of ids.entries()) await runs.create(runRecord(runId, { tenantId: tenant, createdAt: created(placed[i]![0]) }));
    const tied = [ids[5]!, ids[6]!].sort().reverse();
    const expected = [ids[0], ids[1], ids[2], ids[3], ids[4], ...tied, ids[7]];
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await listings.runs(tenant, { limit: 4, ...(cursor ? { cursor } : {}) });
      pages.push(page.items.map((r) => r.runId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages.slice(0, 2)).toEqual([expected.slice(0, 4), expected.slice(4)]);
    expect(pages.flat()).toEqual(expected);
    // A cursor is one position: the one a listing gave out before the index was sharded goes on from the same run.
    const fromOld = await listings.runs(tenant, { limit: 3, cursor: cursorAt({ createdAt: at(4), id: ids[3]! }) });
    expect(fromOld.items.map((r) => r.runId)).toEqual(expected.slice(4, 7));
    expect((await listings.runs(tenant, { limit: 10, cursor: fromOld.nextCursor })).items.map((r) => r.runId)).toEqual([ids[7]]);
  });

  it("lists a session's runs, from its first, however many older runs the tenant has", async () => {
    const { runs, listings } = make();
    const tenant = freshId("tenant");
    for (let i = 0; i < 12; i++)
      await runs.create(runRecord(`${freshId("run")}_old${i}`, { tenantId: tenant, createdAt: at(i), sessionId: "busy" }));
    const mine = [20, 21, 22].map((m) => ({ runId: `${freshId("run")}_s${m}`, createdAt: at(m) }));
    for (const { runId, createdAt } of mine) {
      await listings.touchSession(tenant, "young", runId, createdAt);
      await runs.create(runRecord(runId, { tenantId: tenant, createdAt, sessionId: "young" }));
    }
    const first = await listings.runs(tenant, { limit: 2, sessionId: "young" });
    const rest = await listings.runs(tenant, { limit: 2, sessionId: "young", cursor: first.nextCursor });
    expect([...first.items, ...rest.items].map((r) => r.runId)).toEqual(mine.map((r) => r.runId).reverse());
    expect(rest.nextCursor).toBeUndefined();
    expect((await listings.runs(tenant, { limit: 20, sessionId: "busy" })).items).toHaveLength(12);
  });

  it("filters by status and by session, still filling each page", async () => {
    const { listings, tenant, ids } = await fiveRuns();
    expect((await listings.runs(tenant, { limit: 10, status: "failed" })).items.map((r) => r.runId)).toEqual([ids[3]]);
    const even = await listings.runs(tenant, { limit: 2, sessionId: "even" });
    expect(even.items.map((r) => r.runId)).toEqual([ids[4], ids[2]]);
    const rest = await listings.runs(tenant, { limit: 2, sessionId: "even", cursor: even.nextCursor });
    expect(rest).toEqual({ items: [expect.objectContaining({ runId: ids[0] })] });
    expect((await listings.runs(tenant, { limit: 10, sessionId: "odd", status: "succeeded" })).items.map((r) => r.runId)).toEqual([ids[1]]);
  });

  it("lists only the runs created at or after `since`, filters and pages alike", async () => {
    const { listings, tenant, ids } = await fiveRuns();
    expect((await listings.runs(tenant, { limit: 10, since: at(2) })).items.map((r) => r.runId)).toEqual([ids[4], ids[3], ids[2]]);
    expect((await listings.runs(tenant, { limit: 10, sessionId: "even", since: at(1) })).items.map((r) => r.runId)).toEqual([
      ids[4],
      ids[2],
    ]);
    const first = await listings.runs(tenant, { limit: 2, since: at(1) });
    const rest = await listings.runs(tenant, { limit: 2, since: at(1), cursor: first.nextCursor });
    expect([...first.items, ...rest.items].map((r) => r.runId)).toEqual([ids[4], ids[3], ids[2], ids[1]]);
    expect((await listings.runs(tenant, { limit: 10, since: at(5) })).items).toEqual([]);
  });

  it.each([
    "not-a-cursor",
    Buffer.from(JSON.stringify({ k: "2026-11-27T10:00:00.000Z" })).toString("base64url"),
    Buffer.from(JSON.stringify({ k: "2026-11-27T10:00:00.000Z#run_1", extra: 1 })).toString("base64url"),
    Buffer.from("{").toString("base64url"),
  ])("refuses a cursor it did not give out (%s) with a 400", async (cursor) => {
    const { listings, tenant } = await fiveRuns();
    const refused = await listings.runs(tenant, { limit: 2, cursor }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BadRequestError);
    expect(refused).toMatchObject({ statusCode: 400, code: "invalid_cursor" });
    await expect(listings.sessions(tenant, { limit: 2, cursor })).rejects.toBeInstanceOf(BadRequestError);
  });

  it("lists sessions newest first by their first run, each with its latest run", async () => {
    const { listings } = make();
    const [tenant, other] = [freshId("tenant"), freshId("tenant")];
    await listings.touchSession(tenant, "first", "run_a", at(1));
    await listings.touchSession(tenant, "second", "run_b", at(2));
    await listings.touchSession(tenant, "first", "run_c", at(3));
    await listings.touchSession(tenant, "third", "run_d", at(4));
    await listings.touchSession(other, "first", "run_e", at(5));
    const page = await listings.sessions(tenant, { limit: 2 });
    expect(page.items).toEqual([
      { sessionId: "third", createdAt: at(4), updatedAt: at(4), lastRunId: "run_d" },
      { sessionId: "second", createdAt: at(2), updatedAt: at(2), lastRunId: "run_b" },
    ]);
    expect(await listings.sessions(tenant, { limit: 2, cursor: page.nextCursor })).toEqual({
      items: [{ sessionId: "first", createdAt: at(1), updatedAt: at(3), lastRunId: "run_c" }],
    });
    expect((await listings.sessions(freshId("tenant"), { limit: 2 })).items).toEqual([]);
  });
});

describe("listings on DynamoDB: what the sharded index reads", () => {
  it(`spreads one tenant's runs over ${LISTING_SHARDS} shards, and still lists the runs written before sharding`, async () => {
    const table = dynamo.table();
    const [runs, listings] = [new RunStore(table, 1), new ListingStore(table)];
    const tenant = freshId("tenant");
    const ids = Array.from({ length: 40 }, (_, i) => `${freshId("run")}_${String(i).padStart(2, "0")}`);
    for (const [i, runId] of ids.entries()) await runs.create(runRecord(runId, { tenantId: tenant, createdAt: at(10 + i) }));
    // Two runs as they were written before sharding: under the tenant's one listing key.
    const legacy = [`${freshId("run")}_legacy0`, `${freshId("run")}_legacy1`];
    for (const [i, runId] of legacy.entries())
      await table.putItem({
        Item: {
          ...keys.run(runId),
          ...runRecord(runId, { tenantId: tenant, createdAt: at(i) }),
          listPk: `TENANT#${tenant}#RUNS`,
          listSk: `${at(i)}#${runId}`,
        },
      });
    const perShard = await Promise.all(
      Array.from({ length: LISTING_SHARDS }, async (_, shard) => {
        const { Count } = await table.query({
          IndexName: "byTenant",
          KeyConditionExpression: "listPk = :pk",
          ExpressionAttributeValues: { ":pk": `TENANT#${tenant}#RUNS#${shard}` },
          Select: "COUNT",
        });
        return Count ?? 0;
      }),
    );
    expect(perShard.reduce((a, b) => a + b)).toBe(40);
    expect(perShard.filter((n) => n > 0).length).toBeGreaterThanOrEqual(LISTING_SHARDS / 2);
    expect(Math.max(...perShard)).toBeLessThan(40 / 2);

    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listings.runs(tenant, { limit: 7, ...(cursor ? { cursor } : {}) });
      listed.push(...page.items.map((r) => r.runId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(listed).toEqual([...ids.reverse(), ...legacy.reverse()]);
  });

  it("lists the sessions listed before sharding, and moves one into its shard at its next run, in the same place", async () => {
    const table = dynamo.table();
    const listings = new ListingStore(table);
    const tenant = freshId("tenant");
    // Two sessions as they were listed before sharding, under the tenant's one key.
    for (const [i, sessionId] of ["old_a", "old_b"].entries())
      await table.putItem({
        Item: {
          ...keys.session(tenant, sessionId),
          sessionId,
          lastRunId: `run_${i}`,
          createdAt: at(i),
          updatedAt: at(i),
          listPk: `TENANT#${tenant}#SESSIONS`,
          listSk: `${at(i)}#${sessionId}`,
        },
      });
    for (let i = 0; i < 6; i++) await listings.touchSession(tenant, `new_${i}`, `run_n${i}`, at(10 + i));
    const all = async () => {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await listings.sessions(tenant, { limit: 3, ...(cursor ? { cursor } : {}) });
        ids.push(...page.items.map((s) => s.sessionId));
        cursor = page.nextCursor;
      } while (cursor);
      return ids;
    };
    const order = ["new_5", "new_4", "new_3", "new_2", "new_1", "new_0", "old_b", "old_a"];
    expect(await all()).toEqual(order);
    await listings.touchSession(tenant, "old_a", "run_later", at(30));
    const { Item } = await table.getItem({ Key: keys.session(tenant, "old_a") });
    expect(Item?.listPk).toBe(`TENANT#${tenant}#SESSIONS#${listingShard("old_a")}`);
    expect(await all()).toEqual(order);
  });

  it("reads a session's runs only from when the session began, not the tenant's whole index", async () => {
    const table = dynamo.table();
    let scanned = 0;
    const counting = new Proxy(await table.client(), {
      get: (doc, name) =>
        name === "send"
          ? async (command: Parameters<typeof doc.send>[0]) => {
              const out = await doc.send(command);
              if (command instanceof QueryCommand) scanned += Number((out as { ScannedCount?: number }).ScannedCount ?? 0);
              return out;
            }
          : Reflect.get(doc, name),
    });
    const [runs, listings] = [new RunStore(table, 1), new ListingStore(new Table(async () => counting, table.name))];
    const tenant = freshId("tenant");
    // 30 runs of other sessions, an hour before the session began.
    for (let i = 0; i < 30; i++) await runs.create(runRecord(`${freshId("run")}_old${i}`, { tenantId: tenant, createdAt: at(i) }));
    const later = (m: number) => new Date(Date.UTC(2026, 10, 27, 12, m)).toISOString();
    const mine = [0, 1].map((m) => ({ runId: `${freshId("run")}_s${m}`, createdAt: later(m) }));
    for (const { runId, createdAt } of mine) {
      await listings.touchSession(tenant, "young", runId, createdAt);
      await runs.create(runRecord(runId, { tenantId: tenant, createdAt, sessionId: "young" }));
    }
    const page = await listings.runs(tenant, { limit: 20, sessionId: "young" });
    expect(page.items.map((r) => r.runId)).toEqual(mine.map((r) => r.runId).reverse());
    expect(scanned).toBe(2);
  });
});
