import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { limitToolOutput } from "../../../../shared/memory/toolOutput.js";

describe("limitToolOutput", () => {
  it("passes output within the limit through unchanged", () => {
    expect(limitToolOutput("short output", 10_000, "calc.txt")).toEqual({ forModel: "short output", truncated: false });
    const exactly = "x".repeat(100);
    expect(limitToolOutput(exactly, 100, "calc.txt")).toEqual({ forModel: exactly, truncated: false });
  });

  it("cuts long output and points to the stored artifact and read_artifact", () => {
    const output = "y".repeat(25_000);
    const { forModel, truncated } = limitToolOutput(output, 10_000, "search_results.txt");
    expect(truncated).toBe(true);
    expect(forModel.length).toBeLessThanOrEqual(10_000);
    expect(forModel.startsWith("y".repeat(9_000))).toBe(true);
    const pointer = forModel.slice(forModel.lastIndexOf("\n") + 1);
    expect(pointer).toContain('"search_results.txt"');
    expect(pointer).toContain("read_artifact");
    expect(pointer).toContain("of 25000 characters");
    const shown = Number(/showing the first (\d+)/.exec(pointer)![1]);
    expect(forModel.indexOf(pointer)).toBe(shown + 1);
  });

  it("cuts at a line break near the limit", () => {
    const lines = Array.from({ length: 500 }, (_, i) => `line ${i}: ${"z".repeat(40)}`).join("\n");
    const { forModel } = limitToolOutput(lines, 5_000, "log.txt");
    const head = forModel.slice(0, forModel.indexOf("\n[Output truncated"));
    expect(lines.startsWith(head)).toBe(true);
    expect(head.endsWith("\n")).toBe(true);
  });

  it("never splits a surrogate pair", () => {
    const emoji = "😀".repeat(3_000);
    const { forModel } = limitToolOutput(emoji, 1_001, "faces.txt");
    const head = forModel.slice(0, forModel.indexOf("\n[Output truncated"));
    expect(head).toBe("😀".repeat(head.length / 2));
  });

  it("returns only the pointer when the limit cannot hold more", () => {
    const { forModel, truncated } = limitToolOutput("a".repeat(1_000), 20, "a.txt");
    expect(truncated).toBe(true);
    expect(forModel).toMatch(/^\n\[Output truncated: showing the first 0 of 1000 characters\./);
  });

  it("keeps a prefix of the output and stays within any limit that can hold the pointer (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3_000 }), fc.integer({ min: 250, max: 2_000 }), (output, maxChars) => {
        const { forModel, truncated } = limitToolOutput(output, maxChars, "out.txt");
        expect(truncated).toBe(output.length > maxChars);
        expect(forModel.length).toBeLessThanOrEqual(maxChars);
        if (truncated) expect(output.startsWith(forModel.slice(0, forModel.lastIndexOf("\n[Output truncated")))).toBe(true);
        else expect(forModel).toBe(output);
      }),
    );
  });
});
