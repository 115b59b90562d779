import { describe, expect, it } from "vitest";
import { endRun } from "../../../../shared/run/lifecycle.js";
import { resumeRun } from "../../../../shared/run/resume.js";
import { leaveSession } from "../../../../shared/run/sessionQueue.js";
import { eventTypes, withRun } from "../../../support/memoryRun.js";
import { runRecord } from "../../../support/records.js";

/** `POST /v1/runs/{id}/resume` over in-memory ports: what is redriven, what is refused. */

async function failedRun(code: string) {
  const fixture = await withRun({ status: "running" });
  await endRun(fixture.ports, fixture.runId, "failed", { error: { code, message: "it failed" } });
  fixture.fakes.executions.setStatus(fixture.runId, "FAILED");
  return { ...fixture, run: (await fixture.ports.runs.get(fixture.runId))! };
}

describe("resumeRun", () => {
  it("a run that failed at a step is redriven: running again, its log open again, a slot taken", async () => {
    const { ports, fakes, runId, run } = await failedRun("Stepwise.ModelRejected");
    expect(await fakes.activeRuns.count("tenant_1")).toBe(0);

    const resumed = await resumeRun(ports, run);

    expect(resumed).toMatchObject({ runId, status: "running" });
    expect(resumed.error).toBeUndefined();
    expect(fakes.executions.calls.filter((c) => c.action === "redrive")).toHaveLength(1);
    expect(eventTypes(fakes, runId)).toEqual(["run.failed", "run.resumed"]);
    expect(await fakes.activeRuns.count("tenant_1")).toBe(1);
    // The reopened log takes the rest of the run.
    expect(await ports.events.append(runId, [{ type: "agent.thought", data: { agent: "react", text: "going on" } }])).toHaveLength(1);
  });

  it.each(["Stepwise.InvalidInput", "Stepwise.AgentFailed"])(
    "a run that failed with %s is refused with 409 and nothing changes",
    async (code) => {
      const { ports, fakes, runId, run } = await failedRun(code);
      await expect(resumeRun(ports, run)).rejects.toMatchObject({ statusCode: 409, message: expect.stringContaining(code) });
      expect(fakes.executions.calls.filter((c) => c.action === "redrive")).toHaveLength(0);
      expect((await ports.runs.get(runId))!.status).toBe("failed");
      expect(eventTypes(fakes, runId)).toEqual(["run.failed"]);
      expect(await fakes.activeRuns.count("tenant_1")).toBe(0);
    },
  );

  it("a failed run resumed while another run has its session waits its turn, and is redriven when that run leaves", async () => {
    const { ports, fakes, runId, run } = await failedRun("Stepwise.ModelRejected");
    // While it lay failed, the session's next message took the session.
    const other = runRecord("run_next", { status: "running", sessionId: run.sessionId, executionArn: ports.executions.arnFor("run_next") });
    await ports.runs.create(other);
    await ports.sessions.claim(run.tenantId, run.sessionId, other.runId, { queue: false });

    const resumed = await resumeRun(ports, run);

    expect(resumed).toMatchObject({ runId, status: "queued", queuedBehind: other.runId });
    expect(fakes.executions.calls.filter((c) => c.action === "redrive")).toHaveLength(0);
    expect(eventTypes(fakes, runId)).toEqual(["run.failed", "run.resumed", "run.queued_behind"]);
    expect(await ports.sessions.runs(run.tenantId, run.sessionId)).toEqual({ activeRunId: other.runId, waiting: [runId] });

    await endRun(ports, other.runId, "succeeded", { result: "done" });
    await leaveSession(ports, (await ports.runs.get(other.runId))!);

    expect(fakes.executions.calls.filter((c) => c.action === "redrive").map((c) => c.target)).toEqual([run.executionArn]);
    expect(await ports.executions.describe(run.executionArn)).toBe("RUNNING");
    expect((await ports.runs.get(runId))!.status).toBe("running");
    // Its turn comes after the one sent while it lay failed.
    expect((await ports.runs.get(runId))!.turn).toBe(2);
    expect(await ports.sessions.runs(run.tenantId, run.sessionId)).toEqual({ activeRunId: runId, waiting: [] });
  });
});
