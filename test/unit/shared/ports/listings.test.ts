import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../../shared/errors.js";
import type { Listings } from "../../../../shared/ports/listings.js";
import type { Runs } from "../../../../shared/ports/runs.js";
import { ListingStore } from "../../../../shared/store/listings.js";
import { RunStore } from "../../../../shared/store/runs.js";
import { MemoryListings } from "../../../../shared/testing/memoryListings.js";
import { MemoryRuns } from "../../../../shared/testing/memoryRuns.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";
import { runRecord } from "../../../support/records.js";

/** The listings port's contract (over the runs port, whose runs it lists): fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

/** Minute `m` of a fixed day, as run records carry their creation time. */
const at = (m: number) => new Date(Date.UTC(2026, 10, 27, 10, m)).toISOString();

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
