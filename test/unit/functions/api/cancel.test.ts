import { describe, expect, it } from "vitest";
import { routes } from "../../../../functions/api/routes.js";
import { callRoute } from "../../../support/callRoute.js";
import { withRun } from "../../../support/memoryRun.js";

/**
 * `POST /v1/runs/{id}/cancel` refused over the in-memory ports: a run that has ended is a 409 that
 * changes nothing; an unknown run, or another tenant's, a 404 that leaves it going. A cancel mid-run
 * and the 409 after it are shown end to end in test/integration/asyncRuns.test.ts.
 */
async function cancel(ports: unknown, runId: string, tenantId = "tenant_1") {
  const res = await callRoute(routes, ports, { method: "POST", path: `/v1/runs/${runId}/cancel`, tenantId });
  return { status: res.status, error: res.body?.error };
}

describe("a cancel that is refused", () => {
  it("a finished run → 409 saying how it ended; it stays succeeded, its log and execution untouched", async () => {
    const { ports, fakes, runId, run } = await withRun({ status: "succeeded" });
    const events = fakes.events.all(runId);
    const res = await cancel(ports, runId);
    expect(res).toMatchObject({ status: 409, error: { code: "conflict", message: expect.stringContaining("succeeded") } });
    expect(await ports.runs.status(runId)).toBe("succeeded");
    expect(fakes.events.all(runId)).toEqual(events);
    expect(await fakes.executions.describe(run.executionArn)).toBe("RUNNING");
  });

  it("an unknown run, or another tenant's → 404, and the run goes on", async () => {
    const { ports, fakes, runId, run } = await withRun({ status: "running" });
    expect((await cancel(ports, "run_doesnotexist000")).status).toBe(404);
    const foreign = await cancel(ports, runId, "tenant_2");
    expect(foreign).toMatchObject({ status: 404, error: { code: "not_found" } });
    expect(await ports.runs.status(runId)).toBe("running");
    expect(fakes.events.all(runId)).toEqual([]);
    expect(await fakes.executions.describe(run.executionArn)).toBe("RUNNING");
    // The owner's cancel of the same run is accepted: the refusals above were about who asked.
    expect((await cancel(ports, runId)).status).toBe(202);
    expect(await ports.runs.status(runId)).toBe("cancelled");
  });
});
