import { describe, expect, it } from "vitest";
import { answerOf, parsePlanText, planText } from "../../../../infra/display/forkEdits.js";

describe("a fork's plan written as text", () => {
  const steps = [
    { title: "Compute", tasks: ["Evaluate 17*23", "Evaluate (120/8)+2^5"], done_when: "both results are known" },
    { title: "Report", tasks: ["Write report.md"] },
  ];

  it("reads back the steps it was written from, each block a step, each '- ' line a task", () => {
    const text = planText(steps);
    expect(text).toBe("Compute\n- Evaluate 17*23\n- Evaluate (120/8)+2^5\ndone when: both results are known\n\nReport\n- Write report.md");
    expect(parsePlanText(text)).toEqual({ steps });
    // Windows line ends, stray blank lines and '*' bullets read the same.
    expect(parsePlanText(`\r\n${text.replaceAll("\n", "\r\n").replace("- Write", "* Write")}\r\n\r\n\r\n`)).toEqual({ steps });
  });

  it("names the step and the line that keep a text from being a plan", () => {
    expect(parsePlanText("  \n\n")).toEqual({ problem: expect.stringContaining("The plan has no step") });
    expect(parsePlanText("Compute\n- a\n\nReport")).toEqual({ problem: "Step 2 (“Report”) has no task: add a line starting with “- ”." });
    expect(parsePlanText("- a\n- b")).toEqual({ problem: "Step 1 has no title: its first line is a task (“- …”)." });
    expect(parsePlanText("Compute\n- a\nthen check it")).toEqual({
      problem: "Step 1 (“Compute”) has a line that is neither a task (“- …”) nor “done when: …”: “then check it”.",
    });
  });

  it("shows a question's recorded result as the person's answer alone", () => {
    expect(answerOf("The user answered: metric units")).toBe("metric units");
    expect(answerOf("17*23 = 391")).toBe("17*23 = 391");
  });
});
