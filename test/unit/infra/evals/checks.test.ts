import { describe, expect, it } from "vitest";
import { AnswerExpectation, checkAnswer } from "../../../../infra/evals/checks.js";
import type { Judge } from "../../../../infra/evals/judge.js";

const ANSWER = "17*23 = 391 and (120/8)+2^5 = 47.";
const check = (expect: unknown, answer = ANSWER, judge?: Judge) =>
  checkAnswer(AnswerExpectation.parse(expect), { input: "Compute", answer }, judge);

describe("answer checks", () => {
  it("contains and does not contain: a phrase as written, the reason naming it", async () => {
    expect(await check({ contains: ["391", "47"], notContains: ["error"] })).toEqual([
      { check: 'contains "391"', passed: true, score: 1 },
      { check: 'contains "47"', passed: true, score: 1 },
      { check: 'does not contain "error"', passed: true, score: 1 },
    ]);
    const [missing] = await check({ contains: ["392"] });
    expect(missing).toMatchObject({ passed: false, score: 0, reason: 'the answer does not contain "392"' });
  });

  it("regex: a source, or a pattern with flags", async () => {
    const results = await check({ regex: ["= 391\\b", { pattern: "^17\\*23", flags: "m" }, { pattern: "DONE", flags: "i" }] });
    expect(results.map((r) => r.passed)).toEqual([true, true, false]);
    expect(results[2]?.reason).toBe("the answer does not match /DONE/i");
  });

  it("JSON schema: the answer or its first json block, with the schema's errors as the reason", async () => {
    const schema = { type: "object", required: ["total"], properties: { total: { type: "number" } } };
    expect((await check({ jsonSchema: schema }, '{"total": 438}'))[0]?.passed).toBe(true);
    expect((await check({ jsonSchema: schema }, 'Here it is:\n```json\n{"total": 438}\n```'))[0]?.passed).toBe(true);
    const [wrongType] = await check({ jsonSchema: schema }, '{"total": "438"}');
    expect(wrongType).toMatchObject({ passed: false, reason: "the answer's JSON does not fit the schema: /total must be number" });
    const [notJson] = await check({ jsonSchema: schema }, "438");
    expect(notJson?.passed).toBe(false);
    const [prose] = await check({ jsonSchema: schema }, "The total is 438.");
    expect(prose?.reason).toMatch(/not JSON/);
  });

  it("judge: passes at or above the threshold, says the judge's reason below it, and counts its tokens", async () => {
    const judge: Judge = async ({ answer, rubric }) => ({
      score: answer.includes("391") ? 0.8 : 0.2,
      reason: `graded by ${rubric}`,
      tokens: 42,
    });
    expect((await check({ judge: { rubric: "gives 391" } }, ANSWER, judge))[0]).toEqual({
      check: "judge",
      passed: true,
      score: 0.8,
      tokens: 42,
    });
    const [low] = await check({ judge: { rubric: "gives 391", threshold: 0.9 } }, ANSWER, judge);
    expect(low).toMatchObject({ passed: false, reason: "the judge scored 0.8 (below 0.9): graded by gives 391" });
    const [failing] = await check({ judge: { rubric: "r" } }, ANSWER, async () => {
      throw new Error("429 rate limited");
    });
    expect(failing).toMatchObject({ passed: false, score: 0, reason: "the judge failed: 429 rate limited" });
  });
});
