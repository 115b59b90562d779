import { describe, expect, it } from "vitest";
import type { SandboxResult } from "../../../../shared/contracts/sandbox.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { sandboxResult } from "../../../../shared/testing/sandboxResult.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { runCodeTool } from "../../../../shared/tools/runCode.js";

/** run_code over a sandbox that reports what a call left in output/: what becomes a file of the run, and what the model reads. */
function runWith(result: Partial<SandboxResult>) {
  const sandbox = {
    keepsState: false,
    grant: "sandbox:invoke" as const,
    async run() {
      return sandboxResult(result);
    },
  };
  const files = new MemoryFileStore();
  const tool = runCodeTool(sandbox, { timeoutMs: 1_000, memoryMb: 128, maxOutputChars: 1_000 });
  const output = tool.run(
    tool.parameters.parse({ code: "print(1)" }),
    testToolContext({ runId: "run_1", idempotencyKey: "run_1:react:0:call_1", files }),
  );
  return { files, output };
}
const body = (text: string) => Buffer.from(text).toString("base64");

describe("run_code's outputs", () => {
  it("keeps files of output/ subfolders as sub/name, and says which it saved", async () => {
    const { files, output } = runWith({
      outputs: [
        { name: "charts/q1.csv", base64: body("a\n") },
        { name: "top.txt", base64: body("t") },
      ],
    });
    expect(await output).toBe("files written: charts/q1.csv (2 bytes), top.txt (1 bytes)");
    expect((await files.list("run_1")).map((f) => f.name)).toEqual(["charts/q1.csv", "top.txt"]);
  });

  it("tells the model which entries were not saved and why", async () => {
    const { files, output } = runWith({
      outputs: [{ name: "kept.csv", base64: body("x") }],
      refused: ["passwd: a symbolic link, not saved", "pipe: not a regular file (a device, socket or pipe), not saved"],
    });
    expect(await output).toBe(
      "files written: kept.csv (1 bytes)\n\nnot saved from output/:\n- passwd: a symbolic link, not saved\n- pipe: not a regular file (a device, socket or pipe), not saved",
    );
    expect((await files.list("run_1")).map((f) => f.name)).toEqual(["kept.csv"]);
  });

  it("cleans every part of an output's path: no format characters, no hidden parts", async () => {
    const { files, output } = runWith({ outputs: [{ name: "re\u202Eport/.hidden\u200B.txt", base64: body("x") }] });
    await output;
    expect((await files.list("run_1")).map((f) => f.name)).toEqual(["report/hidden.txt"]);
  });
});

describe("run_code's inputs", () => {
  it("checks sizes before any download: of all files, one over the input limit is not fetched or mounted, and is named", async () => {
    const mounted: string[][] = [];
    const sandbox = {
      keepsState: false,
      grant: "sandbox:invoke" as const,
      async run(request: { files?: { name: string }[] }) {
        mounted.push((request.files ?? []).map((f) => f.name));
        return sandboxResult({ stdout: "ok" });
      },
    };
    const files = new MemoryFileStore();
    await files.put("run_1", "small.csv", "a,b\n1,2\n");
    await files.put("run_1", "big.log", new Uint8Array(5 * 1024 * 1024));
    const fetched: string[] = [];
    const get = files.get.bind(files);
    files.get = async (runId, name) => {
      fetched.push(name);
      return get(runId, name);
    };
    const tool = runCodeTool(sandbox, { timeoutMs: 1_000, memoryMb: 128, maxOutputChars: 1_000 });
    const context = testToolContext({ runId: "run_1", idempotencyKey: "run_1:react:0:call_1", files });
    const output = await tool.run(tool.parameters.parse({ code: "print(1)" }), context);
    expect(fetched).toEqual(["small.csv"]);
    expect(mounted).toEqual([["small.csv"]]);
    expect(output).toContain(
      "not in files/ (over the sandbox's 4194304 bytes of input): big.log (5242880 bytes); read them with read_artifact",
    );
    // Named, it is refused before anything is fetched.
    const named = await tool.run(tool.parameters.parse({ code: "print(1)", files: ["big.log"] }), context);
    expect(named).toMatch(/^Error: the files come to 5242880 bytes/);
    expect(fetched).toEqual(["small.csv"]);
  });
});
