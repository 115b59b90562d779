import { describe, expect, it } from "vitest";
import { terminalMarkdown } from "../../../../infra/cli/markdown.js";
import { palette, Renderer } from "../../../../infra/cli/render.js";
import type { RunEvent } from "../../../../shared/contracts/events.js";

/** Answers and agent text in the CLI's terminal: Markdown drawn, not printed as source. */
describe("Markdown in the terminal", () => {
  const plain = (text: string) => terminalMarkdown(text, palette(false), false);

  it("draws a table as a table, with its columns aligned", () => {
    expect(plain("| column | sum |\n|---|---:|\n| amount | 450.00 |\n| n | 5 |")).toEqual([
      "┌────────┬────────┐",
      "│ column │    sum │",
      "├────────┼────────┤",
      "│ amount │ 450.00 │",
      "├────────┼────────┤",
      "│ n      │      5 │",
      "└────────┴────────┘",
    ]);
  });

  it("lists with their markers and nesting, code blocks line by line, arithmetic and symbols as written", () => {
    expect(
      plain(
        "1. first **bold**\n2. second\n   - nested `code`\n\n```python\ndef f(x):\n    return x\n```\n\n17*23 = 391 and 2*5 = 10 & <ok>",
      ),
    ).toEqual([
      "1. first bold",
      "2. second",
      "   - nested code",
      "",
      "│ def f(x):",
      "│     return x",
      "",
      "17*23 = 391 and 2*5 = 10 & <ok>",
    ]);
  });

  it("colours headings, strong text and Python on a terminal", () => {
    const coloured = terminalMarkdown("## Totals\n\n**450**\n\n```python\nimport csv\n```", palette(true), true);
    expect(coloured).toEqual(["\x1b[1mTotals\x1b[22m", "", "\x1b[1m450\x1b[22m", "", expect.stringContaining("\x1b[35mimport\x1b[39m")]);
  });

  it("the answer of `stepwise run` is drawn, its table included", () => {
    const renderer = new Renderer({ color: false });
    const event = {
      seq: 9,
      at: "2026-01-01T00:00:00.000Z",
      type: "run.succeeded",
      data: { result: "Totals:\n\n| region | amount |\n|---|---:|\n| north | 220 |", files: [] },
    } as unknown as RunEvent;
    expect(renderer.event(event).join("\n")).toContain("Answer:\nTotals:\n\n┌────────┬────────┐\n│ region │ amount │");
  });
});
