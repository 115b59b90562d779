import { describe, expect, it } from "vitest";
import { type ActualCall, callMatches, scoreTrajectory, TrajectoryExpectation } from "../../../../infra/evals/trajectory.js";

const calc = (expression: string): ActualCall => ({ tool: "calculator", arguments: { expression } });
const note: ActualCall = { tool: "write_artifact", arguments: { filename: "report.md", content: "# Report\n\n391" } };
const expectation = (input: unknown) => TrajectoryExpectation.parse(input);

describe("trajectory matching", () => {
  describe("argument masks", () => {
    it("matches arguments exactly: the same keys and the same values", () => {
      expect(callMatches({ tool: "calculator", arguments: { expression: "17*23" } }, calc("17*23"))).toBe(true);
      expect(callMatches({ tool: "calculator", arguments: { expression: "17*24" } }, calc("17*23"))).toBe(false);
      // A key the call has and the expectation does not list is a difference too.
      expect(callMatches({ tool: "write_artifact", arguments: { filename: "report.md" } }, note)).toBe(false);
      expect(callMatches({ tool: "text_stats", arguments: { expression: "17*23" } }, calc("17*23"))).toBe(false);
    });

    it("matches a value by a pattern over its text, or ignores it, key by key", () => {
      const masked = { tool: "write_artifact", arguments: { filename: { $pattern: "^report\\.md$" }, content: { $ignore: true } } };
      expect(callMatches(masked, note)).toBe(true);
      expect(callMatches(masked, { tool: "write_artifact", arguments: { filename: "notes.md", content: "x" } })).toBe(false);
      // An ignored key must still be there.
      expect(callMatches(masked, { tool: "write_artifact", arguments: { filename: "report.md" } })).toBe(false);
      // A pattern over a value that is not a string reads its JSON.
      expect(callMatches({ tool: "add", arguments: { a: { $pattern: "^2$" } } }, { tool: "add", arguments: { a: 2 } })).toBe(true);
    });

    it("ignores all the arguments when the expectation gives none", () => {
      expect(callMatches({ tool: "write_artifact" }, note)).toBe(true);
    });
  });

  describe("modes and partial credit", () => {
    const calls = [
      { tool: "calculator", arguments: { expression: "17*23" } },
      { tool: "calculator", arguments: { expression: "(120/8)+2^5" } },
      { tool: "write_artifact" },
    ];
    const made = [calc("17*23"), calc("(120/8)+2^5"), note];

    it("strict: the same calls in the same order score 1; one call out of three missing scores 2/3 and names it", () => {
      expect(scoreTrajectory(expectation({ match: "strict", calls }), made)).toEqual({ score: 1, passed: true, reasons: [] });
      const result = scoreTrajectory(expectation({ match: "strict", calls }), [calc("17*23"), note]);
      expect(result.score).toBeCloseTo(2 / 3);
      expect(result.passed).toBe(false);
      expect(result.reasons).toEqual(['expected call not made: calculator {"expression":"(120/8)+2^5"}']);
    });

    it("strict: the right calls in another order get credit for the longest run in order, and the reason says so", () => {
      const result = scoreTrajectory(expectation({ match: "strict", calls }), [note, calc("17*23"), calc("(120/8)+2^5")]);
      expect(result.score).toBeCloseTo(2 / 3);
      expect(result.reasons).toEqual(["the expected calls were made in another order: write_artifact, calculator, calculator"]);
      expect(scoreTrajectory(expectation({ match: "unordered", calls }), [note, calc("17*23"), calc("(120/8)+2^5")]).score).toBe(1);
    });

    it("unordered: an extra call lowers the score to matched / the larger count", () => {
      const result = scoreTrajectory(expectation({ match: "unordered", calls }), [...made, calc("1+1")]);
      expect(result.score).toBe(3 / 4);
      expect(result.reasons).toEqual(['unexpected call: calculator {"expression":"1+1"}']);
    });

    it("superset: extra calls are fine, each expected call missing costs its share", () => {
      expect(scoreTrajectory(expectation({ match: "superset", calls: calls.slice(0, 1) }), made).score).toBe(1);
      const half = scoreTrajectory(expectation({ match: "superset", calls: [calls[0], { tool: "run_code" }] }), made);
      expect(half).toEqual({ score: 0.5, passed: false, reasons: ["expected call not made: run_code"] });
    });

    it("subset: every call made must be expected, expected calls not made cost nothing", () => {
      expect(scoreTrajectory(expectation({ match: "subset", calls }), [calc("17*23")]).score).toBe(1);
      const result = scoreTrajectory(expectation({ match: "subset", calls }), [calc("17*23"), { tool: "text_stats", arguments: {} }]);
      expect(result).toEqual({ score: 0.5, passed: false, reasons: ["unexpected call: text_stats {}"] });
    });

    it("a threshold lets partial credit pass", () => {
      const result = scoreTrajectory(expectation({ match: "strict", calls, threshold: 0.6 }), [calc("17*23"), note]);
      expect(result.passed).toBe(true);
      expect(result.reasons).toHaveLength(1);
    });

    it("pairs calls for the most matches when a mask fits several (a greedy pairing would score less)", () => {
      const wide = { tool: "calculator", arguments: { expression: { $pattern: "\\d" } } };
      const narrow = { tool: "calculator", arguments: { expression: "17*23" } };
      // The wide expectation comes first and would take 17*23, leaving the narrow one nothing.
      expect(scoreTrajectory(expectation({ match: "unordered", calls: [wide, narrow] }), [calc("17*23"), calc("2+2")]).score).toBe(1);
    });

    it("no calls expected and none made is a full score", () => {
      expect(scoreTrajectory(expectation({ match: "strict", calls: [] }), []).score).toBe(1);
      expect(scoreTrajectory(expectation({ match: "strict", calls: [] }), [note]).score).toBe(0);
    });
  });
});
