import { describe, expect, it } from "vitest";
import { acceptRun } from "../../../../shared/run/acceptRun.js";
import { memoryPorts } from "../../../../shared/testing/memoryPorts.js";

/** A run's budget at the one way in (acceptRun, so at every door): bad budgets are 400, a spent period is 429 with a wait. */

const links = { api: "http://api.test", stream: "http://stream.test", console: false };

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: { statusCode?: number; code?: string; retryAfterSeconds?: number }) => e,
  );

describe("acceptRun with budgets", () => {
  it.each([{ tokens: 0 }, { tokens: -5 }, { costUsd: 0 }])("a run budget of %o is refused (400) and no run is created", async (budget) => {
    const { ports, fakes } = memoryPorts();
    expect(await refusal(acceptRun(ports, "acme", { input: "Compute 2+2", budget }, { links }))).toMatchObject({ statusCode: 400 });
    expect(fakes.runs.records.size).toBe(0);
  });

  it("the run keeps its budget and the tenant's period limits, fixed at submission", async () => {
    const { ports } = memoryPorts();
    await ports.tenantSettings.put("acme", { budget: { day: { tokens: 50_000 }, onExhausted: "deliver" } });
    const { run } = await acceptRun(ports, "acme", { input: "Compute 2+2", budget: { tokens: 9_000 } }, { links });
    expect(run.budget).toEqual({ tokens: 9_000, onExhausted: "deliver", day: { tokens: 50_000 } });
  });

  it("a tenant whose day is spent gets 429 over_budget with the seconds until the day turns; nothing is created", async () => {
    const { ports, fakes } = memoryPorts();
    await ports.tenantSettings.put("acme", { budget: { day: { tokens: 1_000 } } });
    await ports.spend.adjust(
      { tenantId: "acme", runId: "run_old", at: new Date() },
      { tokens: 1_000, costMicros: 0 },
      { day: { tokens: 1_000 } },
    );
    const error = await refusal(acceptRun(ports, "acme", { input: "Compute 2+2" }, { links }));
    expect(error).toMatchObject({ statusCode: 429, code: "over_budget" });
    expect(error?.retryAfterSeconds).toBeGreaterThan(0);
    expect(error?.retryAfterSeconds).toBeLessThanOrEqual(86_400);
    expect(fakes.activeRuns.taken.get("acme") ?? 0).toBe(0);
    expect(fakes.runs.records.size).toBe(0);
    // Another tenant is not affected.
    expect((await acceptRun(ports, "other", { input: "Compute 2+2" }, { links })).run.status).toBe("queued");
  });

  it("a cost budget with a model that has no price is refused (400 no_price)", async () => {
    const { ports } = memoryPorts({ settings: { model: { name: "offline" } } });
    expect(await refusal(acceptRun(ports, "acme", { input: "Compute 2+2", budget: { costUsd: 1 } }, { links }))).toMatchObject({
      statusCode: 400,
      code: "no_price",
    });
  });
});
