import { describe, expect, it } from "vitest";
import {
  executorPrompt,
  type PromptContext,
  plannerPrompt,
  reactPrompt,
  routerPrompt,
  summarizerPrompt,
} from "../../../../shared/agent/prompts.js";

/** Operators' instructions in every role's prompt: after the stable part (role and tools), before what changes (date, files). */

const context: PromptContext = {
  tools: [{ name: "calculator", description: "Evaluates arithmetic.", access: "read" }],
  files: [{ name: "report.md", contentType: "text/markdown", bytes: 12, origin: "Written by write_artifact" }],
};
const instructions = "Answer in French.\nCite a source for every figure.";

describe.each([
  ["router", routerPrompt],
  ["planner", plannerPrompt],
  ["executor", executorPrompt],
  ["react", reactPrompt],
  ["summarizer", summarizerPrompt],
])("the %s's prompt", (_, prompt) => {
  it("carries the instructions after the role and tools, before the date and files, and is unchanged up to them", () => {
    const without = prompt(context);
    const withInstructions = prompt({ ...context, instructions });
    const at = withInstructions.indexOf(instructions);
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(withInstructions.indexOf("Today is"));
    // The part before them is the prompt without instructions, up to the date: a provider's cache keeps that prefix.
    const stable = without.slice(0, without.indexOf("Today is"));
    expect(withInstructions.startsWith(stable)).toBe(true);
    expect(withInstructions.indexOf("- calculator (read)") < at || !withInstructions.includes("- calculator (read)")).toBe(true);
  });
});
