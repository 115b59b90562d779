import { describe, expect, it } from "vitest";
import type { Sessions } from "../../../../shared/ports/sessions.js";
import { SessionStore } from "../../../../shared/store/sessions.js";
import { MemorySessions } from "../../../../shared/testing/memorySessions.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The contract of the sessions port (who runs in a session, its queue, its turns): fake and DynamoDB adapter alike. */

const dynamo = useDynalite();
const turn = (q: string, a: string) => [
  { role: "user" as const, content: q },
  { role: "assistant" as const, content: a },
];

describe.each([
  { name: "in memory", make: (): Sessions => new MemorySessions() },
  { name: "DynamoDB adapter on dynalite", make: (): Sessions => new SessionStore(dynamo.table(), 30) },
])("sessions port: $name", ({ make }) => {
  it("claims racing for an idle session: exactly one run is active, the others are told who", async () => {
    const sessions = make();
    const [tenant, session] = [freshId("tenant"), freshId("ses")];
    const claims = await Promise.all(
      ["run_a", "run_b", "run_c", "run_d"].map((id) => sessions.claim(tenant, session, id, { queue: false })),
    );
    const active = claims.filter((c) => c.outcome === "active");
    expect(active).toHaveLength(1);
    const winner = ["run_a", "run_b", "run_c", "run_d"][claims.indexOf(active[0]!)];
    expect(claims.filter((c) => c.outcome === "busy")).toEqual(Array(3).fill({ outcome: "busy", activeRunId: winner }));
  });

  it("queued claims racing behind a busy session all get a place, distinct turn numbers, and are released in order", async () => {
    const sessions = make();
    const [tenant, session] = [freshId("tenant"), freshId("ses")];
    expect(await sessions.claim(tenant, session, "run_0", { queue: true, newSession: true })).toEqual({ outcome: "active", turn: 1 });
    const ids = ["run_1", "run_2", "run_3", "run_4", "run_5"];
    const claims = await Promise.all(ids.map((id) => sessions.claim(tenant, session, id, { queue: true })));
    expect(claims.every((c) => c.outcome === "queued")).toBe(true);
    const queued = claims as Extract<(typeof claims)[number], { outcome: "queued" }>[];
    expect(queued.map((c) => c.turn).sort()).toEqual([2, 3, 4, 5, 6]);
    expect(queued.map((c) => c.position).sort()).toEqual([1, 2, 3, 4, 5]);
    const { waiting } = await sessions.runs(tenant, session);
    // The queue is the order of the turn numbers; each waits behind the one before it.
    expect(waiting).toEqual([...ids].sort((a, b) => queued[ids.indexOf(a)]!.turn - queued[ids.indexOf(b)]!.turn));
    for (const [i, id] of waiting.entries()) expect(queued[ids.indexOf(id)]!.behind).toBe(i === 0 ? "run_0" : waiting[i - 1]);

    // A waiting run that leaves drops out; the active one hands on to the first waiting.
    await sessions.release(tenant, session, waiting[2]!);
    expect(await sessions.release(tenant, session, "run_0")).toEqual({
      activeRunId: waiting[0],
      waiting: [waiting[1], waiting[3], waiting[4]],
    });
    // Releasing again changes nothing.
    expect(await sessions.release(tenant, session, "run_0")).toEqual({
      activeRunId: waiting[0],
      waiting: [waiting[1], waiting[3], waiting[4]],
    });
    for (const id of [waiting[0], waiting[1], waiting[3], waiting[4]]) await sessions.release(tenant, session, id!);
    expect(await sessions.runs(tenant, session)).toEqual({ activeRunId: undefined, waiting: [] });
    expect(await sessions.claim(tenant, session, "run_6", { queue: false })).toEqual({ outcome: "active", turn: 7 });
  });

  it("turns read in turn order whatever order they were written in; a rolled-back turn stays out, also when written late", async () => {
    const sessions = make();
    const [tenant, session] = [freshId("tenant"), freshId("ses")];
    await sessions.appendTurn(tenant, session, "run_c", 3, turn("third", "C"));
    await sessions.appendTurn(tenant, session, "run_a", 1, turn("first", "A"));
    await sessions.appendTurn(tenant, session, "run_b", 2, turn("second", "B"));
    await sessions.appendTurn(tenant, session, "run_a", 1, turn("first", "A")); // a retry
    expect((await sessions.messages(tenant, session)).map((m) => [m.seq, m.content, m.runId])).toEqual([
      [1, "first", "run_a"],
      [2, "A", "run_a"],
      [3, "second", "run_b"],
      [4, "B", "run_b"],
      [5, "third", "run_c"],
      [6, "C", "run_c"],
    ]);
    await sessions.removeTurn(tenant, session, "run_b", 2);
    await sessions.appendTurn(tenant, session, "run_b", 2, turn("second", "B again"));
    // Rolled back before it answered: its answer, written late, stays out too.
    await sessions.removeTurn(tenant, session, "run_d", 4);
    await sessions.appendTurn(tenant, session, "run_d", 4, turn("fourth", "D"));
    expect((await sessions.messages(tenant, session)).map((m) => m.content)).toEqual(["first", "A", "third", "C"]);
  });
});
