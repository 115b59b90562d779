import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STREAM_BUNDLING, STREAM_HANDLER } from "../../../../infra/aws/handlers.js";
import { EsbuildBundling } from "../../../../infra/aws/stepwiseFunction.js";

// Words of zod's German messages: present wherever all of zod (its locales) was bundled.
const ZOD_LOCALES = "erwartet instanceof";

describe("the stream function's bundle", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "stepwise-bundle-"));
    new EsbuildBundling(STREAM_HANDLER, STREAM_BUNDLING).tryBundle(dir);
  }, 120_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("keeps AG-UI's schemas, and the whole of zod they take, out of the handler's files", async () => {
    const files = (await readdir(dir)).filter((name) => name.endsWith(".mjs"));
    expect(files).toContain("index.mjs");
    for (const file of files) expect((await readFile(path.join(dir, file), "utf8")).includes(ZOD_LOCALES), file).toBe(false);
    expect((await readFile(path.join(dir, "node_modules/@ag-ui/core/schemas.mjs"), "utf8")).includes(ZOD_LOCALES)).toBe(true);
  });

  it("finds them by name, as the handler's import() does on Lambda, and they check an AG-UI request", async () => {
    const script = path.join(dir, "checkInput.mjs");
    await writeFile(
      script,
      `const { RunAgentInputSchema } = await import("@ag-ui/core/schemas");
const input = { threadId: "t1", runId: "r1", state: {}, messages: [{ id: "m1", role: "user", content: "hi" }], tools: [], context: [], forwardedProps: {} };
console.log(JSON.stringify([RunAgentInputSchema.safeParse(input).success, RunAgentInputSchema.safeParse({ ...input, messages: "hi" }).success]));`,
    );
    const output = execFileSync(process.execPath, [script], { cwd: dir, encoding: "utf8" });
    expect(JSON.parse(output)).toEqual([true, false]);
  });
});
