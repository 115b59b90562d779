import { afterEach, describe, expect, it, vi } from "vitest";
import { openInterrupt } from "../../../../shared/agent/interrupts.js";
import { GuardrailUnavailableError } from "../../../../shared/guardrails/checks.js";
import { GuardrailBlockedError } from "../../../../shared/guardrails/textGuard.js";
import { metrics } from "../../../../shared/observability.js";
import { cancelRun } from "../../../../shared/run/cancel.js";
import { endRun, RUN_FAULT_METRIC, reconcileExecutionEnd } from "../../../../shared/run/lifecycle.js";
import { finalize } from "../../../../shared/steps/finalize.js";
import { recordFailure } from "../../../../shared/steps/recordFailure.js";
import { recordTimeout } from "../../../../shared/steps/recordTimeout.js";
import { eventTypes, withRun } from "../../../support/memoryRun.js";

/** How a run ends (the one place: endRun), over in-memory ports. */

describe("endRun", () => {
  it("ends the run once: terminal status, the terminal event last, its slot given back once, its open interrupts closed", async () => {
    const { ports, fakes, runId } = await withRun({ status: "running" });
    await openInterrupt(ports, { interruptId: "int_1", runId, kind: "ask_user", question: "?", summary: "?" });
    expect(await fakes.activeRuns.count("tenant_1")).toBe(1);

    expect(await endRun(ports, runId, "cancelled", { error: { code: "cancelled", message: "by the user" } })).toBe(true);
    expect(await endRun(ports, runId, "cancelled")).toBe(false);
    expect(await endRun(ports, runId, "succeeded")).toBe(false);

    expect(await ports.runs.get(runId)).toMatchObject({ status: "cancelled", error: { code: "cancelled" }, endedAt: expect.any(String) });
    expect(eventTypes(fakes, runId).filter((t) => t.startsWith("run."))).toEqual(["run.cancelled"]);
    expect(eventTypes(fakes, runId).at(-1)).toBe("run.cancelled");
    expect(await fakes.activeRuns.count("tenant_1")).toBe(0);
    expect((await ports.interrupts.get(runId, "int_1"))?.status).toBe("cancelled");
    // The log is closed: a late step's event is dropped.
    expect(await ports.events.append(runId, [{ type: "agent.thought", data: { agent: "react", text: "late" } }])).toEqual([]);
  });

  it("a step that died after ending the run but before its event: the repeat writes the event, and the slot is not given back twice", async () => {
    const { ports, fakes, runId } = await withRun({ status: "running" });
    await fakes.activeRuns.acquire("tenant_1", 10); // another run of the tenant
    await ports.runs.end(runId, { status: "failed", error: { code: "boom", message: "it broke" } }, ["running"]);
    await fakes.activeRuns.release("tenant_1"); // what the dead step had done
    expect(await endRun(ports, runId, "failed", { error: { code: "boom", message: "it broke" } })).toBe(false);
    expect(eventTypes(fakes, runId)).toEqual(["run.failed"]);
    expect(await fakes.activeRuns.count("tenant_1")).toBe(1);
  });

  it("Finalize succeeds with the stored answer; Record failure and Record timeout say why", async () => {
    const ok = await withRun({ status: "running", result: "4", files: ["sum.md"] });
    expect(await finalize({ runId: ok.runId }, ok.ports)).toEqual({ runId: ok.runId, status: "succeeded" });
    expect(ok.fakes.events.all(ok.runId).at(-1)).toMatchObject({ type: "run.succeeded", data: { result: "4", files: ["sum.md"] } });

    const failed = await withRun({ status: "running" });
    const cause = JSON.stringify({ errorType: "Stepwise.ModelError", errorMessage: "the model is down" });
    expect(await recordFailure({ runId: failed.runId, error: { Error: "Stepwise.ModelError", Cause: cause } }, failed.ports)).toMatchObject(
      { status: "failed", cause: "Stepwise.ModelError: the model is down" },
    );
    expect(failed.fakes.events.all(failed.runId).at(-1)).toMatchObject({
      type: "run.failed",
      data: { error: { code: "Stepwise.ModelError", message: "Stepwise.ModelError: the model is down" } },
    });

    // A guardrail's errors as Lambda carries them (type and message only): a block ends the run
    // blocked with the check and reason; a block check that could not answer fails it, saying so.
    const lambdaCause = (error: Error) => JSON.stringify({ errorType: error.name, errorMessage: error.message, trace: [] });
    const blocked = await withRun({ status: "running" });
    const block = new GuardrailBlockedError("no-secrets", "matched its pattern 1 time(s)");
    await recordFailure({ runId: blocked.runId, error: { Error: block.name, Cause: lambdaCause(block) } }, blocked.ports);
    expect(await blocked.ports.runs.get(blocked.runId)).toMatchObject({
      status: "blocked",
      error: { code: "no-secrets", message: "no-secrets blocked the answer: matched its pattern 1 time(s)" },
    });
    const down = await withRun({ status: "running" });
    const unavailable = new GuardrailUnavailableError({ kind: "moderation", action: "block" }, new Error("connection refused"));
    await recordFailure({ runId: down.runId, error: { Error: unavailable.name, Cause: lambdaCause(unavailable) } }, down.ports);
    expect(await down.ports.runs.get(down.runId)).toMatchObject({
      status: "failed",
      error: {
        code: "Stepwise.ModelUnavailable",
        message: expect.stringMatching(/guardrail check moderation \(moderation\) could not answer: connection refused\. It fails closed/),
      },
    });

    const late = await withRun({ status: "awaiting_input" });
    await openInterrupt(late.ports, {
      interruptId: "int_1",
      runId: late.runId,
      kind: "plan_approval",
      summary: "Approve the plan\nsteps…",
    });
    await recordTimeout({ runId: late.runId }, late.ports);
    expect(await late.ports.runs.get(late.runId)).toMatchObject({
      status: "timed_out",
      error: { message: "No decision arrived in time for: Approve the plan" },
    });
    expect((await late.ports.interrupts.get(late.runId, "int_1"))?.status).toBe("timed_out");
  });
});

describe("cancelRun", () => {
  it("stops the execution; the run ends cancelled with its slot back", async () => {
    const { ports, fakes, runId, run } = await withRun({ status: "running" });
    await cancelRun(ports, run, "not needed");
    expect(await ports.runs.status(runId)).toBe("cancelled");
    expect(await fakes.executions.describe(run.executionArn)).toBe("ABORTED");
    expect(await fakes.activeRuns.count("tenant_1")).toBe(0);
    // Step Functions reports the stop: no extra notification is queued.
    expect(fakes.notifyQueue.take()).toEqual([]);
    await expect(cancelRun(ports, (await ports.runs.get(runId))!, "again")).rejects.toMatchObject({ statusCode: 409 });
  });

  it("a run whose execution has gone is cancelled all the same, and its terminal webhook is queued once", async () => {
    const { ports, fakes, runId, run } = await withRun({ status: "running" });
    fakes.executions.setStatus(runId, "missing");
    await cancelRun(ports, run, "not needed");
    expect(await ports.runs.status(runId)).toBe("cancelled");
    expect(fakes.notifyQueue.take()).toEqual([{ kind: "ended", runId }]);
  });
});

describe("the RunFaults metric (what the operator's alarm watches)", () => {
  afterEach(() => metrics.clearMetrics());
  let published = 0;
  /** The RunFaults counted so far: what the invocations' flushes publish (their EMF lines). */
  const faultsCounted = () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: any) => {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      return true;
    });
    try {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    } finally {
      spy.mockRestore();
    }
    for (const line of lines) published += [JSON.parse(line)[RUN_FAULT_METRIC] ?? 0].flat().reduce((a: number, b: number) => a + b, 0);
    return published;
  };

  it("counts a run failed by Stepwise or what it depends on, not one failed by its own input or agent, nor other endings", async () => {
    faultsCounted();
    published = 0;
    // The run's own: "Record failure" with an error no retry can change.
    for (const code of ["Stepwise.InvalidInput", "Stepwise.AgentFailed"]) {
      const own = await withRun({ status: "running" });
      await recordFailure({ runId: own.runId, error: { Error: code, Cause: "the input does not fit" } }, own.ports);
      expect((await own.ports.runs.get(own.runId))?.status).toBe("failed");
    }
    const cancelled = await withRun({ status: "running" });
    await endRun(cancelled.ports, cancelled.runId, "cancelled", { error: { code: "cancelled", message: "by the user" } });
    expect(faultsCounted()).toBe(0);
    // Stepwise's: an execution that failed at its own state once retries were spent (the notifier ends the run).
    const crashed = await withRun({ status: "running" });
    await reconcileExecutionEnd(crashed.ports, crashed.runId, { status: "FAILED", error: "Stepwise.AwsUnavailable", cause: "throttled" });
    expect((await crashed.ports.runs.get(crashed.runId))?.status).toBe("failed");
    expect(faultsCounted()).toBe(1);
    // Counted once, however often the end is reported.
    await reconcileExecutionEnd(crashed.ports, crashed.runId, { status: "FAILED", error: "Stepwise.AwsUnavailable", cause: "throttled" });
    expect(faultsCounted()).toBe(1);
  });
});
