import { describe, expect, it } from "vitest";
import type { OnlineEvals } from "../../../../shared/contracts/evaluation.js";
import type { RunRecord } from "../../../../shared/contracts/run.js";
import { onExecutionStatus, onQueueMessage } from "../../../../shared/run/endAndNotify.js";
import { endRun } from "../../../../shared/run/lifecycle.js";
import { isSampled, scoreRun } from "../../../../shared/run/onlineEvals.js";
import { lastUserText, ScriptedModel } from "../../../../shared/testing/scriptedModel.js";
import { withRun } from "../../../support/memoryRun.js";

/**
 * Online evals over the in-memory ports: which runs are sampled, what scoring stores on the run,
 * and the judges' daily cost cap.
 */

/** A judge that grades as the offline one does: the share of the rubric's quoted phrases the answer has. */
const judgeModel = () =>
  new ScriptedModel((request) => {
    const text = lastUserText(request);
    const answer = text.slice(text.indexOf("Answer:\n"), text.indexOf("\n\nRubric:\n"));
    const phrases = [...text.slice(text.indexOf("Rubric:\n")).matchAll(/"([^"]+)"/g)].map((m) => m[1] as string);
    const found = phrases.filter((p) => answer.includes(p));
    return {
      text: JSON.stringify({ score: found.length / phrases.length, reason: `has ${found.length} of ${phrases.length}` }),
      usage: { promptTokens: 1_000, completionTokens: 100 },
    };
  });

// gpt-4o-mini's list price: $0.15 / $0.60 per million tokens: one judgement above costs $0.00021.
const ONE_JUDGEMENT_USD = (1_000 * 0.15 + 100 * 0.6) / 1_000_000;

const evals = (fields: Partial<OnlineEvals> = {}): OnlineEvals => ({
  sampleRate: 1,
  judges: [
    { name: "correct", rubric: 'The answer gives "4".', threshold: 0.5 },
    { name: "polite", rubric: 'The answer says "please".', threshold: 0.5 },
  ],
  dailyCostCapUsd: 1,
  ...fields,
});

async function succeededRun(onlineEvals: OnlineEvals | undefined, fields: Partial<RunRecord> = {}, model = judgeModel()) {
  const fixture = await withRun({ status: "running", ...fields }, { model });
  if (onlineEvals) await fixture.ports.tenantSettings.put("tenant_1", { onlineEvals });
  await fixture.ports.runs.update(fixture.runId, { result: "2 + 2 = 4" });
  await endRun(fixture.ports, fixture.runId, "succeeded");
  return { ...fixture, model };
}

const statusEvent = (run: RunRecord, status: "SUCCEEDED" | "FAILED") => ({
  "detail-type": "Step Functions Execution Status Change" as const,
  source: "aws.states" as const,
  detail: { executionArn: run.executionArn, stateMachineArn: "arn:sm", name: run.runId, status },
});

describe("online evals: sampling", () => {
  it("samples the share of runs its rate says, the same way every time for a run", () => {
    const ids = Array.from({ length: 2_000 }, (_, i) => `run_${i.toString(36)}`);
    const sampled = ids.filter((id) => isSampled(id, 0.25));
    expect(sampled.length).toBeGreaterThan(400);
    expect(sampled.length).toBeLessThan(600);
    expect(ids.filter((id) => isSampled(id, 0.25))).toEqual(sampled);
    expect(ids.filter((id) => isSampled(id, 0))).toEqual([]);
    expect(ids.filter((id) => isSampled(id, 1))).toEqual(ids);
  });

  it("a sampled run's end queues its scoring on the notify queue; the run's end does not wait for a judge", async () => {
    const { ports, fakes, run, runId, model } = await succeededRun(evals());
    await onExecutionStatus(ports, statusEvent(run, "SUCCEEDED"));
    expect(fakes.notifyQueue.take()).toEqual([{ kind: "score", runId }]);
    expect(model.requests).toHaveLength(0);
    expect((await ports.runs.get(runId))?.evaluation).toBeUndefined();
  });

  it("no scoring is queued for a tenant without online evals, a run not sampled, a failed run or a replay", async () => {
    const cases = [
      await succeededRun(undefined),
      await succeededRun(evals({ sampleRate: 0 })),
      await succeededRun(evals(), { replayOf: "run_recorded" }),
    ];
    const failed = await withRun({ status: "running" });
    await failed.ports.tenantSettings.put("tenant_1", { onlineEvals: evals() });
    await endRun(failed.ports, failed.runId, "failed", { error: { code: "x", message: "y" } });
    for (const { ports, fakes, run } of [...cases, failed]) {
      await onExecutionStatus(ports, statusEvent(run, run.runId === failed.runId ? "FAILED" : "SUCCEEDED"));
      expect(fakes.notifyQueue.take().filter((m) => m.kind === "score")).toEqual([]);
    }
  });
});

describe("online evals: scoring", () => {
  it("each judge scores the answer; the scores, tokens and cost are an eval.scored event after the end and a field of the run", async () => {
    const { ports, fakes, runId, model } = await succeededRun(evals());
    await onQueueMessage(ports, { kind: "score", runId });

    expect(model.requests).toHaveLength(2);
    const evaluation = (await ports.runs.get(runId))?.evaluation;
    expect(evaluation).toMatchObject({
      status: "scored",
      passed: false,
      judges: [
        { name: "correct", score: 1, passed: true, reason: "has 1 of 1" },
        { name: "polite", score: 0, passed: false, reason: "has 0 of 1" },
      ],
      usage: { promptTokens: 2_000, completionTokens: 200 },
    });
    expect(evaluation?.costUsd).toBeCloseTo(2 * ONE_JUDGEMENT_USD, 9);
    const events = fakes.events.all(runId);
    expect(events.map((e) => e.type).slice(-2)).toEqual(["run.succeeded", "eval.scored"]);
    expect(events.at(-1)?.data).toEqual(evaluation);
    // The log stays closed: nothing the run's steps might still write lands after it.
    expect((await ports.events.tip(runId)).closed).toBe(true);
    expect(await ports.events.append(runId, [{ type: "run.cancelled", data: { reason: "late" } }])).toEqual([]);
    expect(await fakes.evalSpend.spent("tenant_1", new Date().toISOString().slice(0, 10))).toBeCloseTo(2 * ONE_JUDGEMENT_USD, 9);
  });

  it("a score message handled twice scores the run once", async () => {
    const { ports, fakes, runId, model } = await succeededRun(evals());
    await onQueueMessage(ports, { kind: "score", runId });
    await onQueueMessage(ports, { kind: "score", runId });
    expect(model.requests).toHaveLength(2);
    expect(fakes.events.all(runId).filter((e) => e.type === "eval.scored")).toHaveLength(1);
  });

  it("a judge whose reply is no verdict fails that judge with the reason; the others still score", async () => {
    const model = new ScriptedModel([{ text: "I cannot grade this." }, { text: '{"score": 1, "reason": "polite"}' }]);
    const { ports, runId } = await succeededRun(evals(), {}, model);
    const evaluation = await scoreRun(ports, runId);
    expect(evaluation?.judges.map((j) => [j.name, j.passed])).toEqual([
      ["correct", false],
      ["polite", true],
    ]);
    expect(evaluation?.judges[0]?.reason).toMatch(/not a verdict.*I cannot grade this/);
  });
});

describe("online evals: the daily cost cap", () => {
  it("once the day's judging has cost the cap, a sampled run is not judged and says why; the next day judges again", async () => {
    const day1 = new Date("2026-11-28T10:00:00Z");
    // The first run's two judgements stay under the cap, the second run's cross it.
    const { ports, fakes, runId, model } = await succeededRun(evals({ dailyCostCapUsd: 3 * ONE_JUDGEMENT_USD }));
    const copies = ["run_cap_1", "run_cap_2", "run_cap_3"];
    for (const copy of copies) await ports.runs.create({ ...(await ports.runs.get(runId))!, runId: copy });

    expect((await scoreRun(ports, runId, day1))?.status).toBe("scored");
    expect((await scoreRun(ports, copies[0]!, day1))?.status).toBe("scored"); // under the cap when it started
    const capped = await scoreRun(ports, copies[1]!, day1);
    expect(model.requests).toHaveLength(4);
    expect(capped).toMatchObject({ status: "skipped", judges: [], costUsd: null });
    expect(capped?.reason).toMatch(/daily cost cap for judging is reached \(\$0\.00084 of \$0\.00063 spent on 2026-11-28 UTC\)/);
    expect(fakes.events.all(copies[1]!).at(-1)).toMatchObject({ type: "eval.scored", data: { status: "skipped" } });
    expect((await ports.runs.get(copies[1]!))?.evaluation?.status).toBe("skipped");

    expect((await scoreRun(ports, copies[2]!, new Date("2026-11-29T00:00:01Z")))?.status).toBe("scored");
    expect(model.requests).toHaveLength(6);
  });

  it("a judge model without a price is not used: its cost could not be held to the cap", async () => {
    const model = judgeModel();
    const fixture = await withRun({ status: "running" }, { model, settings: { model: { name: "my-local-model" } } });
    await fixture.ports.tenantSettings.put("tenant_1", { onlineEvals: evals() });
    await fixture.ports.runs.update(fixture.runId, { result: "4" });
    await endRun(fixture.ports, fixture.runId, "succeeded");
    const evaluation = await scoreRun(fixture.ports, fixture.runId);
    expect(model.requests).toHaveLength(0);
    expect(evaluation?.reason).toMatch(/my-local-model has no price/);
  });
});
