import { describe, expect, it } from "vitest";
import { parseDataset } from "../../../../infra/evals/dataset.js";

describe("eval datasets (JSON Lines)", () => {
  it("reads each line as a case, with the line's number and an id, and the defaults filled in", () => {
    const { cases, problems } = parseDataset(
      [
        JSON.stringify({ id: "arithmetic", input: "Compute 17*23", mode: "react", expect: { contains: ["391"] } }),
        "",
        JSON.stringify({ input: "Compute 2+2", agent: { name: "calc", tools: ["calculator"] } }),
      ].join("\n"),
    );
    expect(problems).toEqual([]);
    expect(cases.map((c) => [c.id, c.line, c.expect.status])).toEqual([
      ["arithmetic", 1, "succeeded"],
      ["line 3", 3, "succeeded"],
    ]);
  });

  it("names each line that does not parse or fit, and keeps the others", () => {
    const { cases, problems } = parseDataset(
      [
        '{"input": "Compute 17*23"',
        JSON.stringify({ input: "ok" }),
        JSON.stringify({ input: "x", mode: "fast" }),
        JSON.stringify({ input: "x", expect: { regex: ["(unclosed"] } }),
        JSON.stringify({ input: "x", expect: { trajectory: { match: "sideways", calls: [] } } }),
        JSON.stringify({
          input: "x",
          expect: { trajectory: { calls: [{ tool: "calculator", arguments: { expression: { $pattern: "[" } } }] } },
        }),
        JSON.stringify({ input: "x", expect: { jsonSchema: { type: "nonsense" } } }),
        JSON.stringify({ input: "x", agent: "Not A Name" }),
        JSON.stringify({ input: "x", surprise: true }),
        JSON.stringify({ id: "line 2", input: "y" }),
      ].join("\n"),
    );
    expect(cases.map((c) => c.line)).toEqual([2]);
    expect(problems.map((p) => p.line)).toEqual([1, 3, 4, 5, 6, 7, 8, 9, 10]);
    const message = (line: number) => problems.find((p) => p.line === line)?.message;
    expect(message(1)).toMatch(/^not JSON/);
    expect(message(3)).toMatch(/^mode: /);
    expect(message(4)).toMatch(/^regex: /);
    expect(message(5)).toMatch(/^expect\.trajectory\.match: /);
    expect(message(6)).toMatch(/^calculator\.expression: /);
    expect(message(7)).toMatch(/^jsonSchema: /);
    expect(message(8)).toMatch(/^agent: /);
    expect(message(9)).toMatch(/surprise/);
    expect(message(10)).toBe('the id "line 2" is used by an earlier line');
  });
});
