import { spawnSync } from "node:child_process";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { editableText, editInEditor, parseEditableText } from "../../../../infra/cli/argumentEditor.js";
import { highlightAnsi } from "../../../../infra/cli/highlight.js";
import { Renderer } from "../../../../infra/cli/render.js";
import { argumentViews, parseEdited } from "../../../../infra/display/toolArguments.js";

/** A tool call's arguments as the person approving it sees and edits them (console and CLI). */
const code =
  'import csv, statistics\n\ndef number(value):\n    try:\n        return float(value)\n    except ValueError:\n        return None\nprint("done")\n';
const runCodeDescription = "Run Python 3 (standard library: csv, json, …).";

describe("tool arguments, readably", () => {
  it("code is code (language from the tool, a file name or a language argument), text is text, the rest JSON", () => {
    expect(argumentViews({ code, files: ["sales.csv"] }, runCodeDescription)).toEqual([
      { name: "code", kind: "code", language: "python", text: code },
      { name: "files", kind: "json", text: '[\n  "sales.csv"\n]' },
    ]);
    expect(argumentViews({ filename: "report.md", content: "# Report\n\nAll good." })).toEqual([
      { name: "filename", kind: "text", text: "report.md" },
      { name: "content", kind: "code", language: "markdown", text: "# Report\n\nAll good." },
    ]);
    expect(argumentViews({ query: "select 1", limit: 5, note: "a long note" })).toEqual([
      { name: "query", kind: "code", language: "sql", text: "select 1" },
      { name: "limit", kind: "json", text: "5" },
      { name: "note", kind: "text", text: "a long note" },
    ]);
    expect(argumentViews({ code: "x", language: "JavaScript" })[0]).toEqual({
      name: "code",
      kind: "code",
      language: "javascript",
      text: "x",
    });
    expect(argumentViews({ code: "x" })[0]).toEqual({ name: "code", kind: "code", language: undefined, text: "x" });
    expect(argumentViews("not an object")).toEqual([]);
  });

  it("edited values are taken as typed; JSON ones parsed, or refused with the argument's name", () => {
    const [codeView, filesView] = argumentViews({ code, files: ["a.csv"] });
    expect(parseEdited(codeView!, 'print("\\n")')).toEqual({ value: 'print("\\n")' });
    expect(parseEdited(filesView!, '["b.csv"]')).toEqual({ value: ["b.csv"] });
    expect(parseEdited(filesView!, "[b.csv")).toEqual({ error: expect.stringMatching(/^'files' is not valid JSON: /) });
  });

  it("the CLI shows code line by line, coloured by language on a terminal", () => {
    const interrupt = {
      interruptId: "int_1",
      kind: "tool_approval",
      summary: "",
      toolName: "run_code",
      arguments: { code, files: ["sales.csv"] },
    } as const;
    const plain = new Renderer({ color: false }).interrupt(interrupt);
    expect(plain).toEqual([
      "? The agent wants to run run_code (int_1)",
      "    code:",
      ...code.split("\n").map((line) => `      │ ${line}`),
      "    files:",
      "      │ [",
      '      │   "sales.csv"',
      "      │ ]",
    ]);
    const coloured = highlightAnsi(code, "python");
    expect(stripVTControlCharacters(coloured)).toBe(code);
    expect(coloured).toContain("\x1b[35mimport\x1b[39m");
    expect(stripVTControlCharacters(highlightAnsi("a < b && c", "javascript"))).toBe("a < b && c");
  });

  it("the CLI's editor file round-trips the values unescaped, and says what is wrong with a bad one", () => {
    const views = argumentViews({ code, files: ["sales.csv"], title: "Q1" }, runCodeDescription);
    const text = editableText(views);
    expect(text).toContain(
      `===== code (code, python) =====\n${code}\n===== files (JSON) =====\n[\n  "sales.csv"\n]\n===== title (text) =====\nQ1\n`,
    );
    expect(parseEditableText(text, views)).toEqual({ arguments: { code, files: ["sales.csv"], title: "Q1" } });
    const changed = text.replace('print("done")', 'print("changed")').replace('"sales.csv"', '"other.csv"');
    expect(parseEditableText(changed, views)).toEqual({
      arguments: { code: code.replace("done", "changed"), files: ["other.csv"], title: "Q1" },
    });
    expect(parseEditableText("", views)).toBeUndefined();
    expect(parseEditableText(text.replace('[\n  "sales.csv"\n]', "[oops"), views)).toEqual({
      error: expect.stringMatching(/^'files' is not valid JSON/),
    });
    expect(parseEditableText(text.replace("===== title (text) =====\nQ1\n", ""), views)).toEqual({
      error: "The ===== title ===== line is missing.",
    });
  });

  it("opens $EDITOR (with its flags) on the file and reads back what it saved", () => {
    const views = argumentViews({ code: "print(1)\n" }, runCodeDescription);
    // An "editor" that rewrites the program, as a person would in vi.
    const editor = `sed -i -e 's/print(1)/print(2)/'`;
    const saved = editInEditor(views, { EDITOR: editor });
    expect(saved).toBeDefined();
    expect(parseEditableText(saved!, views)).toEqual({ arguments: { code: "print(2)\n" } });
    expect(editInEditor(views, { EDITOR: "false" })).toBeUndefined();
    expect(spawnSync("sh", ["-c", "true"]).status).toBe(0);
  });
});
