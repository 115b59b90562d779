import { mkdtemp, readFile, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConsole, ensureConsoleBuilt } from "../../../../infra/console/build.js";

describe("the console's build", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "stepwise-console-"));
    await buildConsole(dir);
  }, 60_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("bundles the shared API client and the plain contract values, never zod or Node-only code", async () => {
    const inputs = JSON.parse(await readFile(path.join(dir, ".inputs.json"), "utf8")) as string[];
    const normalized = inputs.map((input) => path.relative(process.cwd(), path.resolve("infra/console", input)));
    expect(normalized).toEqual(
      expect.arrayContaining(["shared/apiClient/client.ts", "shared/apiClient/eventStream.ts", "shared/contracts/terminal.ts"]),
    );
    expect(normalized.filter((input) => /node_modules\/zod\/|^node:/.test(input))).toEqual([]);
  });

  // The files it was built from (shared/ among them, above) are what decides.
  it("is rebuilt when a file it was built from is newer, or its list of inputs is missing, and kept otherwise", async () => {
    const builtAt = async () => Math.round((await stat(path.join(dir, "console.js"))).mtimeMs);
    // Whole seconds: every file system keeps those exactly.
    const future = new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000);
    await utimes(path.join(dir, "console.js"), future, future);
    await ensureConsoleBuilt(dir);
    expect(await builtAt()).toBe(future.getTime());
    // Older than shared/apiClient/client.ts (and everything else): built again.
    const source = (await stat("shared/apiClient/client.ts")).mtime;
    const older = new Date(source.getTime() - 1000);
    await utimes(path.join(dir, "console.js"), older, older);
    await ensureConsoleBuilt(dir);
    expect(await builtAt()).toBeGreaterThan(older.getTime());
    // A build from before the list was kept: built again.
    await utimes(path.join(dir, "console.js"), future, future);
    await rm(path.join(dir, ".inputs.json"));
    await ensureConsoleBuilt(dir);
    expect(await builtAt()).not.toBe(future.getTime());
  }, 60_000);
});
