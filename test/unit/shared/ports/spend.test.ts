import { describe, expect, it } from "vitest";
import type { SpendLedger } from "../../../../shared/ports/spend.js";
import { SpendStore } from "../../../../shared/store/spend.js";
import { MemorySpend } from "../../../../shared/testing/memorySpend.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The spend ledger port's contract: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();
const at = new Date("2026-11-28T10:00:00Z");

describe.each([
  { name: "in memory", make: (): SpendLedger => new MemorySpend() },
  { name: "DynamoDB adapter on dynalite", make: (): SpendLedger => new SpendStore(dynamo.table()) },
])("spend ledger port: $name", ({ make }) => {
  it("two runs racing for a tenant's last 1,000 tokens: only one reservation fits, and the day's spend never passes the budget", async () => {
    const ledger = make();
    const tenantId = freshId("tenant");
    const limits = { day: { tokens: 10_000 } };
    // 9,000 of the day's 10,000 tokens are spent already.
    expect(await ledger.reserve({ tenantId, runId: `${tenantId}_run_a`, at }, { tokens: 9_000, costMicros: 0 }, limits)).toEqual({
      reserved: true,
    });
    const racing = await Promise.all(
      ["run_b", "run_c", "run_b", "run_c"].map((runId) =>
        ledger.reserve({ tenantId, runId: `${tenantId}_${runId}`, at }, { tokens: 600, costMicros: 0 }, limits),
      ),
    );
    expect(racing.filter((r) => r.reserved)).toHaveLength(1);
    expect(racing.filter((r) => !r.reserved)).toEqual(Array(3).fill({ reserved: false, over: "day" }));
    const totals = await ledger.totals({ tenantId, runId: `${tenantId}_run_b`, at });
    expect(totals.day.tokens).toBe(9_600);
    // Counters with no limit are not written: neither the month nor the runs.
    expect(totals.month.tokens).toBe(0);
    expect(totals.run.tokens).toBe(0);
  });

  it("with a run and a period limit, a refusal by the later counter gives back what the earlier one took", async () => {
    const ledger = make();
    const tenantId = freshId("tenant");
    const limits = { run: { tokens: 5_000 }, day: { tokens: 2_000 }, month: { tokens: 1_500 } };
    const account = { tenantId, runId: `${tenantId}_run_a`, at };
    expect(await ledger.reserve(account, { tokens: 1_000, costMicros: 0 }, limits)).toEqual({ reserved: true });
    // The run and the day have room for 1,000 more; the month has not.
    expect(await ledger.reserve(account, { tokens: 1_000, costMicros: 0 }, limits)).toEqual({ reserved: false, over: "month" });
    expect(await ledger.totals(account)).toEqual({
      run: { tokens: 1_000, costMicros: 0 },
      day: { tokens: 1_000, costMicros: 0 },
      month: { tokens: 1_000, costMicros: 0 },
    });
    expect(await ledger.reserve(account, { tokens: 500, costMicros: 0 }, limits)).toEqual({ reserved: true });
  });

  it("many runs with budgets of their own racing for a tenant's last 1,000 tokens of the month: the month never passes its budget", async () => {
    const ledger = make();
    const tenantId = freshId("tenant");
    const limits = { run: { tokens: 800 }, month: { tokens: 5_000 } };
    // 4,000 of the month's 5,000 are spent by runs with no budget of their own.
    expect(
      await ledger.reserve({ tenantId, runId: `${tenantId}_run_first`, at }, { tokens: 4_000, costMicros: 0 }, { month: limits.month }),
    ).toEqual({
      reserved: true,
    });
    const racing = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        ledger.reserve({ tenantId, runId: `${tenantId}_run_${i}`, at }, { tokens: 400, costMicros: 0 }, limits),
      ),
    );
    expect(racing.filter((r) => r.reserved)).toHaveLength(2);
    const month = (await ledger.totals({ tenantId, runId: `${tenantId}_run_0`, at })).month.tokens;
    expect(month).toBe(4_800);
    // Each refused run's own counter was given back.
    const runs = await Promise.all(racing.map((_, i) => ledger.totals({ tenantId, runId: `${tenantId}_run_${i}`, at })));
    expect(runs.map((t) => t.run.tokens).sort()).toEqual([0, 0, 0, 0, 0, 0, 400, 400]);
  });

  it("a settled reservation gives back what was not spent, and the room it frees can be reserved again", async () => {
    const ledger = make();
    const tenantId = freshId("tenant");
    const account = { tenantId, runId: `${tenantId}_run_a`, at };
    const limits = { run: { tokens: 1_000, costMicros: 5_000 } };
    expect(await ledger.reserve(account, { tokens: 900, costMicros: 1_000 }, limits)).toEqual({ reserved: true });
    expect(await ledger.reserve(account, { tokens: 900, costMicros: 1_000 }, limits)).toEqual({ reserved: false, over: "run" });
    await ledger.adjust(account, { tokens: 300 - 900, costMicros: 400 - 1_000 }, limits);
    expect((await ledger.totals(account)).run).toEqual({ tokens: 300, costMicros: 400 });
    expect(await ledger.reserve(account, { tokens: 700, costMicros: 1_000 }, limits)).toEqual({ reserved: true });
  });

  it("a run's limit is its own; the month's spans the tenant's runs and days; a cost limit refuses as a token limit does", async () => {
    const ledger = make();
    const tenantId = freshId("tenant");
    const limits = { run: { tokens: 500 }, month: { costMicros: 3_000 } };
    const call = { tokens: 400, costMicros: 1_000 };
    expect(await ledger.reserve({ tenantId, runId: `${tenantId}_run_a`, at }, call, limits)).toEqual({ reserved: true });
    expect(await ledger.reserve({ tenantId, runId: `${tenantId}_run_a`, at }, call, limits)).toEqual({ reserved: false, over: "run" });
    expect(await ledger.reserve({ tenantId, runId: `${tenantId}_run_b`, at }, call, limits)).toEqual({ reserved: true });
    const nextDay = new Date("2026-11-29T10:00:00Z");
    expect(await ledger.reserve({ tenantId, runId: `${tenantId}_run_c`, at: nextDay }, call, limits)).toEqual({ reserved: true });
    expect(await ledger.reserve({ tenantId, runId: `${tenantId}_run_d`, at: nextDay }, call, limits)).toEqual({
      reserved: false,
      over: "month",
    });
    const totals = await ledger.totals({ tenantId, runId: `${tenantId}_run_c`, at: nextDay });
    expect(totals).toEqual({
      run: { tokens: 400, costMicros: 1_000 },
      day: { tokens: 0, costMicros: 0 },
      month: { tokens: 1_200, costMicros: 3_000 },
    });
    // Another tenant's counters start at zero.
    const other = freshId("tenant");
    expect(await ledger.reserve({ tenantId: other, runId: `${other}_run_a`, at }, call, limits)).toEqual({ reserved: true });
  });

  it("a call larger than the whole budget is refused even with nothing spent, and writes nothing", async () => {
    const ledger = make();
    const tenantId = freshId("tenant");
    const account = { tenantId, runId: `${tenantId}_run_a`, at };
    expect(await ledger.reserve(account, { tokens: 1_001, costMicros: 0 }, { run: { tokens: 1_000 } })).toEqual({
      reserved: false,
      over: "run",
    });
    expect((await ledger.totals(account)).run).toEqual({ tokens: 0, costMicros: 0 });
  });
});
