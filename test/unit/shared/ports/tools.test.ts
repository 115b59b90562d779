import { describe, expect, it } from "vitest";
import { fileText } from "../../../../shared/ports/files.js";
import type { Tool } from "../../../../shared/ports/tools.js";
import { EventedFileStore } from "../../../../shared/run/fileEvents.js";
import { MemoryEvents } from "../../../../shared/testing/memoryEvents.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { MemoryRuns } from "../../../../shared/testing/memoryRuns.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { writeArtifact } from "../../../../shared/tools/artifacts.js";
import { runCodeTool } from "../../../../shared/tools/runCode.js";
import { writeReport } from "../../../../shared/tools/writeReport.js";

/**
 * Every built-in write tool is idempotent by its call's key: run again with the same key (a call
 * retried after a crash between its side effect and its journal record), it writes nothing more
 * and announces nothing more; another key writes again.
 */

const sandbox = {
  keepsState: false,
  grant: "sandbox:invoke" as const,
  async run() {
    return {
      stdout: "ok\n",
      stderr: "",
      value: null,
      error: null,
      timedOut: false,
      outputs: [{ name: "out.csv", base64: Buffer.from("a,b\n1,2\n").toString("base64") }],
      refused: [],
      runMs: 1,
      startMs: 1,
      notice: null,
    };
  },
};

const cases: [string, Tool, unknown, string][] = [
  ["write_artifact", writeArtifact, { filename: "notes.md", content: "# Notes" }, "notes.md"],
  ["write_report", writeReport, { title: "Q3 totals", format: "markdown", content: "North: 220" }, "q3-totals.md"],
  ["run_code", runCodeTool(sandbox, { timeoutMs: 1_000, memoryMb: 128, maxOutputChars: 1_000 }), { code: "print('ok')" }, "out.csv"],
];

describe.each(cases)("%s", (_name, tool, args, fileName) => {
  function setup() {
    const stored = new MemoryFileStore();
    const events = new MemoryEvents();
    const files = new EventedFileStore(stored, events, new MemoryRuns());
    const context = (key: string) => testToolContext({ runId: "run_1", idempotencyKey: key, files });
    const run = (key: string) => tool.run(tool.parameters.parse(args), context(key));
    const announced = () => events.all("run_1").filter((e) => e.type === "file.created").length;
    return { stored, run, announced };
  }

  it("the same key: the same file, one write, one file.created, the same answer", async () => {
    const { stored, run, announced } = setup();
    const first = await run("run_1:task#0#s1.t1:0:call_1");
    const again = await run("run_1:task#0#s1.t1:0:call_1");
    expect(again).toBe(first);
    expect(stored.writes.filter((w) => w.name === fileName)).toHaveLength(1);
    expect(announced()).toBe(1);
    expect(fileText((await stored.get("run_1", fileName))!).length).toBeGreaterThan(0);
  });

  it("another call (another key) writes again", async () => {
    const { stored, run, announced } = setup();
    await run("run_1:react:0:call_1");
    await run("run_1:react:1:call_2");
    expect(stored.writes.filter((w) => w.name === fileName)).toHaveLength(2);
    expect(announced()).toBe(2);
  });
});
