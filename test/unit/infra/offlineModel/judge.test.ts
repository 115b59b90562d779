import { describe, expect, it } from "vitest";
import { respond } from "../../../../infra/offlineModel/brain.js";
import { JUDGE_PROMPT } from "../../../../shared/contracts/evaluation.js";

const grade = (answer: string, rubric: string) =>
  JSON.parse(
    respond({
      messages: [
        { role: "system", content: JUDGE_PROMPT },
        { role: "user", content: `Task:\nCompute 17*23\n\nAnswer:\n${answer}\n\nRubric:\n${rubric}` },
      ],
    }).content ?? "",
  );

/** The offline model as an eval's judge: it grades by the phrases a rubric quotes, from its request only. */
describe("the offline model judging an answer", () => {
  it("scores the share of the rubric's quoted phrases the answer has, and names the missing ones", () => {
    expect(grade("17*23 = 391", 'The answer gives "391".')).toEqual({
      score: 1,
      reason: 'The answer has every phrase the rubric asks for ("391").',
    });
    expect(grade("17*23 = 391", 'It gives "391" and “report.md”.')).toEqual({ score: 0.5, reason: 'The answer lacks "report.md".' });
    // The rubric's phrases are looked for in the answer only, not in the task.
    expect(grade("I cannot do that", 'It computes "17*23".').score).toBe(0);
  });

  it("says it cannot grade a rubric that quotes nothing, rather than fail it", () => {
    expect(grade("anything", "Is it helpful?")).toMatchObject({ score: 1, reason: expect.stringMatching(/quotes none/) });
  });
});
