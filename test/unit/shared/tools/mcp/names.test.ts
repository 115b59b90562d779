import { describe, expect, it } from "vitest";
import { exposedToolNames, FUNCTION_NAME } from "../../../../../shared/tools/mcp/names.js";

describe("exposedToolNames", () => {
  it("names a source's tools <source>__<tool> and maps each back to the tool's own name", () => {
    const names = exposedToolNames("everything", ["add", "echo", "get-weather"]);
    expect([...names]).toEqual([
      ["everything__add", "add"],
      ["everything__echo", "echo"],
      ["everything__get-weather", "get-weather"],
    ]);
  });

  it("gives tools whose names clean up to the same name distinct names, both mapping back", () => {
    const names = exposedToolNames("fs", ["read.file", "read_file", "read file"]);
    expect(names.size).toBe(3);
    expect(new Set(names.values())).toEqual(new Set(["read.file", "read_file", "read file"]));
    for (const name of names.keys()) {
      expect(name).toMatch(FUNCTION_NAME);
      expect(name.startsWith("fs__read_file_")).toBe(true);
    }
  });

  it("shortens names over 64 characters deterministically, keeping them distinct and valid", () => {
    const long = "a".repeat(80);
    const tools = [long, `${long}b`, `${long}c`];
    const first = exposedToolNames("source_with_a_long_name", tools);
    const second = exposedToolNames("source_with_a_long_name", [...tools].reverse());
    expect(first.size).toBe(3);
    for (const [name, tool] of first) {
      expect(name).toMatch(FUNCTION_NAME);
      expect(name.length).toBe(64);
      expect(second.get(name)).toBe(tool); // the same name for the same tool, whatever the order
    }
  });

  it("cleans characters function names may not hold", () => {
    const [[name, tool]] = [...exposedToolNames("web", ["search/news"])];
    expect(tool).toBe("search/news");
    expect(name).toMatch(/^web__search_news_[0-9a-f]{8}$/);
  });
});
