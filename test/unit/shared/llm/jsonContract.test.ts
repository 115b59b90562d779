import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ContractReply, contractPrompt, MAX_CONSECUTIVE_FAILURES, parseContractReply } from "../../../../shared/llm/jsonContract.js";

const calculator = {
  name: "calculator",
  description: "Evaluate an arithmetic expression.",
  parameters: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] },
};

const callCalculator: ContractReply = { toolCalls: [{ name: "calculator", arguments: { expression: "17*23" } }] };
const CALL_JSON = '{"tool_calls": [{"name": "calculator", "arguments": {"expression": "17*23"}}]}';

function expectError(text: string, ...mentions: (string | RegExp)[]) {
  const result = parseContractReply(text);
  expect(result.ok).toBe(false);
  if (result.ok) return;
  for (const mention of mentions) expect(result.error).toMatch(mention);
  // Every correction repeats the two accepted shapes, so the model can fix its next reply.
  expect(result.error).toContain('{"answer": "<your final answer>"}');
}

describe("contractPrompt", () => {
  it("describes both reply shapes and every tool with its schema", () => {
    const prompt = contractPrompt([calculator]);
    expect(prompt).toContain('{"tool_calls": [{"name": "<tool name>"');
    expect(prompt).toContain('{"answer": "<your final answer>"}');
    expect(prompt).toContain("exactly one JSON object");
    expect(prompt).toContain("- calculator: Evaluate an arithmetic expression.");
    expect(prompt).toContain(JSON.stringify(calculator.parameters));
  });

  it("asks only for an answer when there are no tools", () => {
    expect(contractPrompt([])).not.toContain("tool_calls");
  });
});

describe("parseContractReply", () => {
  it("reads a bare reply", () => {
    expect(parseContractReply(CALL_JSON)).toEqual({ ok: true, value: callCalculator });
    expect(parseContractReply('{"answer": "391"}')).toEqual({ ok: true, value: { answer: "391" } });
  });

  it.each([
    ["a ```json fence", `\`\`\`json\n${CALL_JSON}\n\`\`\``],
    ["a bare ``` fence with prose", `Here you go:\n\`\`\`\n${CALL_JSON}\n\`\`\`\nLet me know.`],
    ["prose before and after", `I will compute it now. ${CALL_JSON} That should do it.`],
    ["prose with braces of its own before", `Using {curly} notation and a } stray brace: ${CALL_JSON}`],
    ["trailing commas", '{"tool_calls": [{"name": "calculator", "arguments": {"expression": "17*23",},},],}'],
    ["arguments sent as a JSON string", '{"tool_calls": [{"name": "calculator", "arguments": "{\\"expression\\": \\"17*23\\"}"}]}'],
    [
      "an extra key next to tool_calls",
      '{"thought": "multiply", "tool_calls": [{"name": "calculator", "arguments": {"expression": "17*23"}}]}',
    ],
  ])("tolerates %s", (_, text) => {
    expect(parseContractReply(text)).toEqual({ ok: true, value: callCalculator });
  });

  it("reads nested arguments and strings holding braces, quotes and fences", () => {
    const args = {
      filename: "a.md",
      content: 'He said "{not json}" } { ```json\n{"answer": "fake"}\n```',
      meta: { tags: ["x", { deep: [1, 2] }] },
    };
    const text = `Saving:\n\`\`\`json\n${JSON.stringify({ tool_calls: [{ name: "write_artifact", arguments: args }] }, null, 2)}\n\`\`\``;
    expect(parseContractReply(text)).toEqual({ ok: true, value: { toolCalls: [{ name: "write_artifact", arguments: args }] } });
  });

  it("reads several calls in one reply, in order", () => {
    const text = '{"tool_calls": [{"name": "a", "arguments": {}}, {"name": "b"}]}';
    expect(parseContractReply(text)).toEqual({
      ok: true,
      value: {
        toolCalls: [
          { name: "a", arguments: {} },
          { name: "b", arguments: {} },
        ],
      },
    });
  });

  it("takes the first valid object when there are several", () => {
    expect(parseContractReply('{"answer": "first"} and then {"answer": "second"}')).toEqual({ ok: true, value: { answer: "first" } });
    expect(parseContractReply('{"note": "not a reply"} then {"answer": "second"}')).toEqual({ ok: true, value: { answer: "second" } });
    expect(parseContractReply('{broken then {"answer": "inner"}')).toEqual({ ok: true, value: { answer: "inner" } });
  });

  it("does not take a reply-shaped object from inside another object's data", () => {
    expectError('{"result": {"answer": "hidden"}}', /neither "tool_calls" nor "answer"/, /result/);
  });

  it.each([
    ["prose only", "The answer is 391.", /no JSON object/],
    ["empty text", "", /no JSON object/],
    ["a cut-off object", '{"tool_calls": [{"name": "calculator", "arguments": {"expression": "17*', /never closed/],
    ["single quotes", "{'answer': '391'}", /not valid JSON/],
    ["a comment", '{"answer": "391" // done\n}', /not valid JSON/],
    ["the wrong keys", '{"action": "calculator", "input": "17*23"}', /neither "tool_calls" nor "answer"/, /action, input/],
    ["both shapes at once", '{"tool_calls": [{"name": "a"}], "answer": "x"}', /both "tool_calls" and "answer"/],
    ["no calls", '{"tool_calls": []}', /tool_calls must list at least one call/],
    ["a call without a name", '{"tool_calls": [{"arguments": {}}]}', /tool_calls\[0\]\.name must be the tool's name/],
    [
      "arguments that are not an object",
      '{"tool_calls": [{"name": "a", "arguments": [1, 2]}]}',
      /tool_calls\[0\]\.arguments must be a JSON object/,
    ],
    ["an answer that is not a string", '{"answer": 391}', /answer must be a string/],
  ])("explains %s", (_, text, ...mentions) => {
    expectError(text, ...mentions);
  });

  it("explains the broken object that looks like the reply rather than prose braces", () => {
    const text = 'I use {this} a lot. {"answer": "391",, }';
    expectError(text, /not valid JSON/, /position 17/);
  });

  it("gives up after three consecutive failures", () => {
    expect(MAX_CONSECUTIVE_FAILURES).toBe(3);
  });

  // --- Properties ---

  // Through JSON once: JSON has no -0, so a generated -0 would come back as 0 and compare unequal.
  const jsonValue = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v))) as fc.Arbitrary<unknown>;
  const toolCall = fc.record({
    name: fc.string({ minLength: 1, maxLength: 20 }),
    // "__proto__" is dropped on purpose by the parser (no prototype pollution): not a round-trip key.
    arguments: fc.dictionary(
      fc.string({ maxLength: 10 }).filter((key) => key !== "__proto__"),
      jsonValue,
      { maxKeys: 4 },
    ),
  });
  const reply: fc.Arbitrary<ContractReply> = fc.oneof(
    fc.array(toolCall, { minLength: 1, maxLength: 3 }).map((toolCalls) => ({ toolCalls })),
    fc.string().map((answer) => ({ answer })),
  );
  const wire = (value: ContractReply) => ("answer" in value ? { answer: value.answer } : { tool_calls: value.toolCalls });
  // Prose may hold anything but an opening brace, which would start a candidate object of its own.
  const prose = fc.string({ maxLength: 40 }).map((s) => s.replaceAll("{", "("));

  it("reads back any valid reply wrapped in prose (property)", () => {
    fc.assert(
      fc.property(reply, prose, prose, fc.boolean(), fc.boolean(), (value, before, after, fenced, pretty) => {
        const json = JSON.stringify(wire(value), null, pretty ? 2 : undefined);
        const text = fenced ? `${before}\n\`\`\`json\n${json}\n\`\`\`\n${after}` : `${before}${json}${after}`;
        expect(parseContractReply(text)).toEqual({ ok: true, value });
      }),
      { numRuns: 500 },
    );
  });

  it("never throws, whatever the text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("{", "}", '"', "\\", ",", "]", "[", ":", "a", " ", "1") }), (text) => {
        const result = parseContractReply(text);
        if (!result.ok) expect(result.error).toMatch(/^Your reply could not be used: /);
      }),
    );
  });
});
