import { describe, expect, it } from "vitest";
import { type Request, routes } from "../../../../functions/api/routes.js";
import type { HttpEvent } from "../../../../functions/http.js";
import { withRun } from "../../../support/memoryRun.js";

/**
 * `POST /v1/runs/{id}/cancel` refused over the in-memory ports: a run that has ended is a 409 that
 * changes nothing; an unknown run, or another tenant's, a 404 that leaves it going. A cancel mid-run
 * and the 409 after it are shown end to end in test/integration/asyncRuns.test.ts.
 */
const route = routes.find((r) => r.method === "POST" && r.pattern.test("/v1/runs/x/cancel"))!;

async function cancel(ports: Request["services"], runId: string, tenantId = "tenant_1") {
  const event = { rawPath: `/v1/runs/${runId}/cancel`, headers: {}, requestContext: { domainName: "api.test", http: { method: "POST" } } };
  try {
    const res = await route.handle({
      event: event as unknown as HttpEvent,
      services: ports,
      tenantId,
      params: { runId },
      remainingMs: () => 30_000,
    } as unknown as Request);
    return { status: res.statusCode, error: undefined };
  } catch (error) {
    const e = error as { statusCode: number; code: string; message: string };
    return { status: e.statusCode, error: { code: e.code, message: e.message } };
  }
}

describe("a cancel that is refused", () => {
  it("a finished run → 409 saying how it ended; it stays succeeded, its log and execution untouched", async () => {
    const { ports, fakes, runId, run } = await withRun({ status: "succeeded" });
    const events = fakes.events.all(runId);
    const res = await cancel(ports as unknown as Request["services"], runId);
    expect(res).toMatchObject({ status: 409, error: { code: "conflict", message: expect.stringContaining("succeeded") } });
    expect(await ports.runs.status(runId)).toBe("succeeded");
    expect(fakes.events.all(runId)).toEqual(events);
    expect(await fakes.executions.describe(run.executionArn)).toBe("RUNNING");
  });

  it("an unknown run, or another tenant's → 404, and the run goes on", async () => {
    const { ports, fakes, runId, run } = await withRun({ status: "running" });
    const services = ports as unknown as Request["services"];
    expect((await cancel(services, "run_doesnotexist000")).status).toBe(404);
    const foreign = await cancel(services, runId, "tenant_2");
    expect(foreign).toMatchObject({ status: 404, error: { code: "not_found" } });
    expect(await ports.runs.status(runId)).toBe("running");
    expect(fakes.events.all(runId)).toEqual([]);
    expect(await fakes.executions.describe(run.executionArn)).toBe("RUNNING");
    // The owner's cancel of the same run is accepted: the refusals above were about who asked.
    expect((await cancel(services, runId)).status).toBe(202);
    expect(await ports.runs.status(runId)).toBe("cancelled");
  });
});
